// Sequence parallelism (engine/model/sequence_parallel.h) with ranks as threads: a GPT's
// slices holding their own rows between the blocks train as the plain split does (the first
// step's loss bit for bit; afterwards only the LayerNorm gradients' order of additions
// differs), with the reduce-scatters, all-gathers and bytes the formula says, and in 3D.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/thread_ranks.h"
#include "tests/support/tiny_gpt.h"

namespace ranklab {
namespace {

using testing::lineWindows;
using testing::trainWithThreads;

// The tiny GPT (2 blocks of width 32, 4 heads, context 16, batch 8) on `ranks` ranks of
// `tensor` slices, AdamW, clipped, 20 steps.
JobSpec gptJob(int ranks, int tensor, bool sequence_parallel) {
  JobSpec job;
  job.train.epochs = 1;
  job.train.max_steps = 20;
  job.train.optimizer = OptimizerKind::kAdamW;
  job.train.lr = 0.002;
  job.train.grad_clip = 0.5;
  job = testing::tinyGpt(job);
  job.parallel.ranks = ranks;
  job.parallel.tensor = tensor;
  job.parallel.sequence_parallel = sequence_parallel;
  return job;
}

double largestRelativeGap(const testing::RunRecorder& a, const testing::RunRecorder& b) {
  double worst = 0;
  for (size_t i = 0; i < a.losses.size(); ++i)
    worst = std::max(worst, std::abs(a.losses[i] - b.losses[i]) / std::abs(b.losses[i]));
  return worst;
}

// The number after "tensor " in rank's "traffic" event ("formula bytes per step: ...").
int64_t tensorFormulaOf(const testing::RunRecorder& rank) {
  for (const std::string& event : rank.events) {
    if (event.rfind("traffic: ", 0) != 0) continue;
    const size_t at = event.find(" tensor ");
    if (at != std::string::npos) return std::stoll(event.substr(at + 8));
  }
  return -1;
}

// Each block forward: 2 all-gathers (ln_1's, ln_2's rows) and 2 reduce-scatters (each
// c_proj's partial); backward: 4 all-gathers (the output gradient and the LayerNorm rows,
// per branch), 2 reduce-scatters and the LayerNorm gradients' one all-reduce; the scatter
// after the embedding all-gathers its gradient, the gather before ln_f its rows. The first
// step's loss is the plain split's bit for bit (the same sums: the ring's all-reduce is its
// reduce-scatter and all-gather), the 20 steps within float rounding of it.
TEST(SequenceParallel, SlicesHoldingTheirRowsTrainAsThePlainSplit) {
  const Dataset train_set = lineWindows(0, 6000), test_set = lineWindows(6000, 7000);
  for (int tensor : {2, 4}) {
    const auto plain = trainWithThreads(gptJob(tensor, tensor, false), train_set, test_set);
    const auto split = trainWithThreads(gptJob(tensor, tensor, true), train_set, test_set);
    ASSERT_EQ(split.size(), plain.size());
    const int64_t whole = int64_t{8} * 16 * 32 * 4;  // a batch's rows, bytes
    const int64_t ln = 4 * 32 * 4;                   // a block's LayerNorm gradients
    for (size_t r = 0; r < split.size(); ++r) {
      const std::string what = "tensor " + std::to_string(tensor) + " rank " + std::to_string(r);
      ASSERT_EQ(split[r].losses.size(), 20u) << what;
      EXPECT_EQ(split[r].losses[0], plain[r].losses[0]) << what;
      const double gap = largestRelativeGap(split[r], plain[r]);
      std::printf("%s: largest relative loss gap to the plain split %.3g\n", what.c_str(), gap);
      EXPECT_LT(gap, 1e-5) << what;
      EXPECT_NEAR(split[r].evals.back().test_loss, plain[r].evals.back().test_loss, 1e-5) << what;
      const StepStats& s = split[r].stats.back();
      EXPECT_EQ(s.reduce_scatters, 2 * 4) << what;
      EXPECT_EQ(s.all_gathers, 2 * 6 + 2) << what;
      // The LayerNorm gradients' sum per block in place of the plain split's four sums.
      EXPECT_EQ(s.allreduces, plain[r].stats.back().allreduces - 2 * 4 + 2) << what;
      const int64_t passes = 2 * 10 * whole + 2 * whole + 2 * 2 * ln;
      EXPECT_EQ(s.bytes_tensor, (tensor - 1) * passes / tensor) << what;
      EXPECT_EQ(tensorFormulaOf(split[r]), s.bytes_tensor) << what;
      EXPECT_EQ(tensorFormulaOf(plain[r]), plain[r].stats.back().bytes_tensor) << what;
    }
  }
}

// Clipped, the slices measure the whole gradient's norm: each slice's LayerNorm gradients,
// from its own rows, are summed over the slices before the norm (counted once, as a
// replicated tensor's), so the norm is the plain split's and every slice's the same.
TEST(SequenceParallel, SlicesMeasureTheWholeGradientsNorm) {
  const Dataset train_set = lineWindows(0, 6000), test_set = lineWindows(6000, 7000);
  const auto plain = trainWithThreads(gptJob(2, 2, false), train_set, test_set);
  const auto split = trainWithThreads(gptJob(2, 2, true), train_set, test_set);
  for (size_t i = 0; i < plain[0].stats.size(); ++i) {
    EXPECT_GT(plain[0].stats[i].grad_norm, 0.0);
    EXPECT_NEAR(split[0].stats[i].grad_norm, plain[0].stats[i].grad_norm,
                1e-5 * plain[0].stats[i].grad_norm)
        << "step " << i + 1;
    EXPECT_EQ(split[0].stats[i].grad_norm, split[1].stats[i].grad_norm) << "step " << i + 1;
  }
}

// Split rows with ZeRO 1, 2 and 3 over 2 replicas: bit for bit as without ZeRO (the
// LayerNorm gradients are summed over the slices before ZeRO's reduce-scatter takes them).
TEST(SequenceParallel, SlicesShardTheirStateWithZero) {
  const Dataset train_set = lineWindows(0, 6000), test_set = lineWindows(6000, 7000);
  JobSpec job = gptJob(4, 2, true);
  job.train.grad_clip = 0;  // ZeRO's norm adds its shards' squares in another order
  const auto plain = trainWithThreads(job, train_set, test_set);
  for (int zero : {1, 2, 3}) {
    job.parallel.zero = zero;
    const auto sharded = trainWithThreads(job, train_set, test_set);
    for (size_t r = 0; r < sharded.size(); ++r) {
      EXPECT_EQ(sharded[r].losses, plain[r].losses) << "zero " << zero << " rank " << r;
      EXPECT_LT(sharded[r].stats.back().mem_optimizer, plain[r].stats.back().mem_optimizer);
    }
  }
}

// Data x pipeline x tensor with sequence parallelism and ZeRO 1 on 8 ranks, cut between
// the blocks, trains as 2 data ranks of the whole model; stage 0 hands on its slice's rows
// alone (half the plain split's activation bytes between the stages).
TEST(SequenceParallel, ThreeDimensionsWithSplitRowsTrainAsTwoDataRanks) {
  const Dataset train_set = lineWindows(0, 6000), test_set = lineWindows(6000, 7000);
  const auto replicas = trainWithThreads(gptJob(2, 1, false), train_set, test_set);
  JobSpec three_d = gptJob(8, 2, true);
  three_d.parallel.pipeline = 2;
  three_d.parallel.stage_layers = {2, 3};  // embedding and h0 | h1, ln_f and the head
  three_d.parallel.microbatches = 2;
  three_d.parallel.zero = 1;
  const auto split = trainWithThreads(three_d, train_set, test_set);
  JobSpec plain_3d = three_d;
  plain_3d.parallel.sequence_parallel = false;
  const auto plain = trainWithThreads(plain_3d, train_set, test_set);
  for (int replica : {0, 1}) {
    for (int r : {4 * replica + 2, 4 * replica + 3}) {  // the last stage's slices
      const double gap = largestRelativeGap(split[size_t(r)], replicas[size_t(replica)]);
      std::printf("3D, sequence parallel, rank %d: largest relative gap to data rank %d %.3g\n", r,
                  replica, gap);
      EXPECT_LT(gap, 1e-5) << "rank " << r;
    }
  }
  // Stage 0's slices send their rows (batch x context / 2 x width) forward: half the
  // plain split's activation bytes (the token table's exchange is the same).
  for (size_t r : {0, 1}) {
    EXPECT_EQ(plain[r].stats.back().bytes_pipeline - split[r].stats.back().bytes_pipeline,
              8 * 16 * 32 * 4 / 2)
        << "rank " << r;
  }
}

}  // namespace
}  // namespace ranklab
