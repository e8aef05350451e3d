// Tensor parallelism with ranks as threads: slices of every layer pair train as one rank
// does on the same batch (only the order of float additions differs), data replicas of
// slices as data ranks do, with one all-reduce per pair forward and one per later pair
// backward.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/train/trainer.h"
#include "tests/support/guarded_device.h"
#include "tests/support/thread_ranks.h"
#include "tests/support/tiny_gpt.h"

namespace ranklab {
namespace {

using testing::trainWithThreads;

// 784-64-32-32-16-10: two pairs split, the classifier replicated.
JobSpec tensorJob(int ranks, int tensor, const std::string& optimizer = "sgd") {
  JobSpec job;
  job.model.layers = {64, 32, 32, 16};
  job.train.epochs = 1;
  job.train.batch_size = 32;
  job.train.max_steps = 20;
  job.train.optimizer = choiceFrom<OptimizerKind>(optimizer);
  job.train.lr = optimizer == "sgd" ? 0.05 : 0.002;
  job.parallel.ranks = ranks;
  job.parallel.tensor = tensor;
  return job;
}

double relativeGap(double a, double b) {
  return std::abs(a - b) / std::max(1e-12, std::abs(b));
}

// Every rank's loss curve and final test loss against the reference's rank `of`.
void expectSameTraining(const std::vector<testing::RunRecorder>& split,
                        const testing::RunRecorder& reference, const std::string& what) {
  double worst = 0;
  for (const auto& rank : split) {
    ASSERT_EQ(rank.losses.size(), reference.losses.size()) << what;
    for (size_t i = 0; i < rank.losses.size(); ++i)
      worst = std::max(worst, relativeGap(rank.losses[i], reference.losses[i]));
    worst =
        std::max(worst, relativeGap(rank.evals.back().test_loss, reference.evals.back().test_loss));
  }
  std::printf("%s: largest relative gap in loss over 20 steps and the evaluation %.3g\n",
              what.c_str(), worst);
  EXPECT_LT(worst, 1e-5) << what;
}

TEST(TensorParallel, SlicesTrainAsOneRankOnTheSameBatch) {
  for (const char* optimizer : {"sgd", "adamw"}) {
    const auto whole = trainWithThreads(tensorJob(1, 1, optimizer));
    for (int tensor : {2, 4}) {
      const auto split = trainWithThreads(tensorJob(tensor, tensor, optimizer));
      ASSERT_EQ(split.size(), static_cast<size_t>(tensor));
      expectSameTraining(split, whole[0],
                         std::string(optimizer) + ", " + std::to_string(tensor) + " slices");
      // The slices count the batch once.
      int64_t samples = 0;
      for (const auto& rank : split) samples += rank.stats.front().samples;
      EXPECT_EQ(samples, 32);
    }
  }
}

// The CNN's head (fc0 column-, fc1 row-parallel) split, its convolutions whole on each
// slice: f before the head hands them the whole input gradient, so they learn as on 1 rank.
TEST(TensorParallel, CnnHeadSlicesTrainAsOneRank) {
  JobSpec job = tensorJob(1, 1);
  job.model.kind = ModelKind::kCnn;
  job.model.channels = {4, 8};
  job.model.kernel_size = 3;
  job.model.layers = {32};
  job.train.max_steps = 20;
  const auto whole = trainWithThreads(job);
  job.parallel.ranks = job.parallel.tensor = 2;
  const auto split = trainWithThreads(job);
  expectSameTraining(split, whole[0], "cnn, 2 slices of the head");
  for (const auto& rank : split)  // g forward, f backward
    EXPECT_EQ(rank.stats.back().allreduces, 2);
}

// A GPT of 2 blocks, 4 heads of width 8, on windows of 16 bytes of a repeated line.
JobSpec gptJob(int ranks, int tensor, const std::string& optimizer) {
  return testing::tinyGpt(tensorJob(ranks, tensor, optimizer));
}

using testing::lineWindows;

// Megatron's split of each block (heads and the MLP's quarter per slice, LayerNorms,
// embedding and tied head whole) trains as one rank on the same batch, with g's two
// all-reduces per block forward and f's two backward, each of the block's whole
// (rows, width) activation, which the ring sends 2 (t - 1) / t of.
TEST(TensorParallel, GptBlocksSplitByHeadsTrainAsOneRank) {
  const Dataset train_set = lineWindows(0, 6000), test_set = lineWindows(6000, 7000);
  for (const char* optimizer : {"sgd", "adamw"}) {
    const JobSpec one = gptJob(1, 1, optimizer);
    const auto whole = trainWithThreads(one, train_set, test_set);
    for (int tensor : {2, 4}) {
      const auto split = trainWithThreads(gptJob(tensor, tensor, optimizer), train_set, test_set);
      ASSERT_EQ(split.size(), static_cast<size_t>(tensor));
      expectSameTraining(
          split, whole[0],
          std::string("gpt, ") + optimizer + ", " + std::to_string(tensor) + " slices");
      const int64_t floats = int64_t{one.train.batch_size} * one.model.context * one.model.width;
      for (const auto& rank : split) {
        EXPECT_EQ(rank.stats.back().allreduces, 4 * one.model.blocks);
        EXPECT_EQ(rank.stats.back().bytes_tx,
                  4 * one.model.blocks * 2 * (tensor - 1) * floats / tensor * 4);
      }
    }
  }
}

// Clipped, the slices sum their parts of the gradient's squares (the replicated
// embedding, LayerNorms and c_proj biases counted once) to the one rank's norm.
TEST(TensorParallel, GptSlicesMeasureTheWholeGradientsNorm) {
  const Dataset train_set = lineWindows(0, 6000), test_set = lineWindows(6000, 7000);
  JobSpec one = gptJob(1, 1, "adamw");
  one.train.grad_clip = 0.5;
  const auto whole = trainWithThreads(one, train_set, test_set);
  JobSpec split = gptJob(2, 2, "adamw");
  split.train.grad_clip = 0.5;
  for (const auto& rank : trainWithThreads(split, train_set, test_set)) {
    ASSERT_EQ(rank.stats.size(), whole[0].stats.size());
    for (size_t i = 0; i < rank.stats.size(); ++i) {
      EXPECT_GT(whole[0].stats[i].grad_norm, 0.0);
      EXPECT_NEAR(rank.stats[i].grad_norm, whole[0].stats[i].grad_norm,
                  1e-5 * whole[0].stats[i].grad_norm);
    }
    EXPECT_NEAR(rank.evals.back().test_loss, whole[0].evals.back().test_loss, 1e-5);
  }
}

// Data x pipeline x tensor in one run (8 ranks: 2 replicas of 2 stages of 2 slices, each
// stage's slices cutting the same layers, 1F1B over 2 micro-batches) trains as 2 data ranks
// of the whole model do; and ZeRO shards each slice's state over its replicas.
TEST(TensorParallel, SlicesCombineWithStagesAndWithZero) {
  for (const char* optimizer : {"sgd", "adamw"}) {
    const auto two = trainWithThreads(tensorJob(2, 1, optimizer));
    JobSpec three_d = tensorJob(8, 2, optimizer);
    three_d.parallel.pipeline = 2;
    three_d.parallel.microbatches = 2;
    const auto split = trainWithThreads(three_d);
    // Rank (replica * 2 + stage) * 2 + slice; the last stage's slices score the loss.
    const std::string what = std::string(optimizer) + ", data 2 x pipeline 2 x tensor 2";
    expectSameTraining({split[2], split[3]}, two[0], what + ", replica 0");
    expectSameTraining({split[6], split[7]}, two[1], what + ", replica 1");
    const auto slices = trainWithThreads(tensorJob(4, 2, optimizer));
    for (int zero : {1, 2, 3}) {
      JobSpec sharded = tensorJob(4, 2, optimizer);
      sharded.parallel.zero = zero;
      const auto got = trainWithThreads(sharded);
      for (size_t r = 0; r < got.size(); ++r) {
        EXPECT_EQ(got[r].losses, slices[r].losses)
            << optimizer << " zero " << zero << " rank " << r;
        EXPECT_EQ(got[r].evals.back().test_loss, slices[r].evals.back().test_loss);
      }
    }
  }
}

// ZeRO over the replicas of pipeline stages: each stage's state sharded over its replicas;
// and in all four at once (data 2 x pipeline 2 x tensor 2 x ZeRO 1), bit for bit.
TEST(TensorParallel, StagesShardTheirStateWithZero) {
  JobSpec three_d = tensorJob(8, 2, "adamw");
  three_d.parallel.pipeline = three_d.parallel.microbatches = 2;
  const auto unsharded = trainWithThreads(three_d);
  three_d.parallel.zero = 1;
  const auto four_d = trainWithThreads(three_d);
  for (size_t r = 0; r < four_d.size(); ++r) {
    EXPECT_EQ(four_d[r].losses, unsharded[r].losses) << "3D x ZeRO 1, rank " << r;
    EXPECT_LT(four_d[r].stats.back().mem_optimizer, unsharded[r].stats.back().mem_optimizer);
  }
  JobSpec staged = tensorJob(4, 1, "adamw");
  staged.parallel.pipeline = 2;
  staged.parallel.microbatches = 2;
  const auto plain = trainWithThreads(staged);
  for (int zero : {1, 2, 3}) {
    JobSpec sharded = staged;
    sharded.parallel.zero = zero;
    if (zero >= 2) sharded.parallel.microbatches = 1;
    const auto want = zero >= 2 ? trainWithThreads([&] {
      JobSpec one = staged;
      one.parallel.microbatches = 1;
      return one;
    }())
                                : plain;
    const auto got = trainWithThreads(sharded);
    for (size_t r = 0; r < got.size(); ++r) {
      EXPECT_EQ(got[r].losses, want[r].losses) << "zero " << zero << " rank " << r;
      EXPECT_LT(got[r].stats.back().mem_optimizer, want[r].stats.back().mem_optimizer);
    }
  }
}

// Under AMP (bf16, a power-of-2 loss scale) a GPT's stages with ZeRO 2 and 3 follow ZeRO 1
// bit for bit: each sums its tied copies' scaled gradients, then 1 unscales before its
// reduce-scatter and 2 and 3 after theirs, which the power of 2 makes the same bits.
TEST(TensorParallel, GptStagesUnderAmpShardLikeZeroOne) {
  const Dataset train_set = lineWindows(0, 6000), test_set = lineWindows(6000, 7000);
  JobSpec staged = gptJob(4, 1, "adamw");
  staged.parallel.pipeline = 2;
  staged.amp.dtype = AmpDtype::kBf16;
  staged.parallel.zero = 1;
  const auto one = trainWithThreads(staged, train_set, test_set);
  ASSERT_EQ(one[1].losses.size(), 20u) << "the last stage scores the loss";
  for (int zero : {2, 3}) {
    staged.parallel.zero = zero;
    const auto got = trainWithThreads(staged, train_set, test_set);
    for (size_t r = 0; r < got.size(); ++r)
      EXPECT_EQ(got[r].losses, one[r].losses) << "bf16 zero " << zero << " rank " << r;
  }
}

// The text sample rank 0 recorded.
std::string sampleOf(const testing::RunRecorder& rank) {
  for (const std::string& event : rank.events)
    if (event.rfind("sample: ", 0) == 0) return event.substr(8);
  return "";
}

// A GPT's slices, replicated, with ZeRO 1, 2 and 3 over the replicas: bit for bit as
// without, drawing the same text. Under 2 and 3 the token table (which the tied
// head reads last in forward and differentiates first) keeps buffers of its own for the
// step: gathered once, reduce-scattered after backward, one more window each.
TEST(TensorParallel, GptSlicesShardTheirStateWithZero) {
  const Dataset train_set = lineWindows(0, 6000), test_set = lineWindows(6000, 7000);
  for (int tensor : {1, 2}) {
    JobSpec job = gptJob(4, tensor, "adamw");
    job.train.sample_chars = 24;
    const auto plain = trainWithThreads(job, train_set, test_set);
    int64_t zero_two_buffers = 0;
    for (int zero : {1, 2, 3}) {
      job.parallel.zero = zero;
      const auto got = trainWithThreads(job, train_set, test_set);
      const std::string what = "tensor " + std::to_string(tensor) + " zero " + std::to_string(zero);
      for (size_t r = 0; r < got.size(); ++r) {
        EXPECT_EQ(got[r].losses, plain[r].losses) << what << " rank " << r;
        EXPECT_EQ(got[r].evals.back().test_loss, plain[r].evals.back().test_loss) << what;
        EXPECT_LT(got[r].stats.back().mem_optimizer, plain[r].stats.back().mem_optimizer);
      }
      EXPECT_FALSE(sampleOf(got[0]).empty()) << what;
      EXPECT_EQ(sampleOf(got[0]), sampleOf(plain[0])) << what;
      // 2 blocks, embedding, ln_f: 4 layers; 2 per replica group under 2 slices' split.
      const StepStats& last = got[0].stats.back();
      // The table's 256 x 32 + 16 x 32 floats held beside the one-layer scratch: its
      // gradients under 2, and its parameters too under 3, as the scratches are.
      if (zero == 2) {
        EXPECT_EQ(last.reduce_scatters, 4) << what;
        EXPECT_GT(last.mem_buffers, int64_t{4} * 8704) << what;
        zero_two_buffers = last.mem_buffers;
      }
      if (zero == 3) {
        EXPECT_EQ(last.reduce_scatters, 4) << what;
        EXPECT_EQ(last.all_gathers, 2 * 4 - 1) << what;  // the table's once
        EXPECT_EQ(last.mem_buffers, 2 * zero_two_buffers) << what;
      }
    }
  }
}

// A GPT's pipeline stages with ZeRO over their replicas: the two copies of the token
// table add each other's gradient before the reduce-scatter (after it each rank holds a
// shard alone), which changes only the order of the additions; in 3D too. ZeRO 2 and 3 (one
// micro-batch) hold each copy for the step, summed after backward and then reduced.
TEST(TensorParallel, GptStagesShardTheirStateWithZero) {
  const Dataset train_set = lineWindows(0, 6000), test_set = lineWindows(6000, 7000);
  JobSpec staged = gptJob(4, 1, "adamw");
  staged.parallel.pipeline = 2;
  for (int tensor : {1, 2}) {
    staged.parallel.ranks = 4 * tensor;
    staged.parallel.tensor = tensor;
    for (int zero : {1, 2, 3}) {
      staged.parallel.microbatches = zero == 1 ? 2 : 1;
      staged.parallel.zero = 0;
      const auto plain = trainWithThreads(staged, train_set, test_set);
      staged.parallel.zero = zero;
      const auto sharded = trainWithThreads(staged, train_set, test_set);
      for (size_t r = 0; r < sharded.size(); ++r) {
        expectSameTraining({sharded[r]}, plain[r],
                           "gpt, tensor " + std::to_string(tensor) + ", pipeline 2, ZeRO " +
                               std::to_string(zero) + ", rank " + std::to_string(r));
        EXPECT_LT(sharded[r].stats.back().mem_optimizer, plain[r].stats.back().mem_optimizer);
      }
    }
  }
}

// A GPT cut into pipeline stages (the embedding first, the final LayerNorm and the head's
// copy of the token table last, their gradients summed after each step so the copies stay
// equal) trains as the whole model does: 2 stages alone, then data x pipeline x tensor on 8
// ranks as 2 data ranks, clipped; every stage measures the whole model's gradient norm, and
// the text drawn through the stages is the whole model's.
TEST(TensorParallel, GptStagesTrainAsTheWholeModelInThreeDimensions) {
  const Dataset train_set = lineWindows(0, 6000), test_set = lineWindows(6000, 7000);
  JobSpec one = gptJob(1, 1, "adamw");
  one.train.sample_chars = 40;
  one.train.grad_clip = 0.5;
  const auto whole = trainWithThreads(one, train_set, test_set);
  JobSpec staged = one;
  staged.parallel.ranks = staged.parallel.pipeline = 2;
  staged.parallel.microbatches = 2;
  const auto stages = trainWithThreads(staged, train_set, test_set);
  expectSameTraining({stages[1]}, whole[0], "gpt, 2 stages");
  ASSERT_EQ(sampleOf(whole[0]).size(), 41u);
  EXPECT_EQ(sampleOf(stages[0]), sampleOf(whole[0]));
  EXPECT_EQ(sampleOf(stages[1]), "") << "rank 0 tells";
  for (const auto& stage : stages) {
    for (size_t i = 0; i < whole[0].stats.size(); ++i) {
      EXPECT_NEAR(stage.stats[i].grad_norm, whole[0].stats[i].grad_norm,
                  1e-5 * whole[0].stats[i].grad_norm);
    }
  }
  JobSpec two = one;
  two.parallel.ranks = 2;
  const auto replicas = trainWithThreads(two, train_set, test_set);
  JobSpec three_d = two;
  three_d.parallel.ranks = 8;
  three_d.parallel.pipeline = three_d.parallel.tensor = 2;
  three_d.parallel.microbatches = 2;
  const auto split = trainWithThreads(three_d, train_set, test_set);
  expectSameTraining({split[2], split[3]}, replicas[0], "gpt, data 2 x pipeline 2 x tensor 2, 0");
  expectSameTraining({split[6], split[7]}, replicas[1], "gpt, data 2 x pipeline 2 x tensor 2, 1");
  EXPECT_EQ(sampleOf(split[0]), sampleOf(replicas[0]));
  std::printf("sample through 2 stages of 2 slices: %s\n", sampleOf(split[0]).c_str());
}

// Slices on a device whose memory the host may not touch, as a GPU's
// (tests/support/guarded_device.h): f's and g's sums go through host copies, the slices are
// cut on the host and uploaded, and the run is the CPU's bit for bit: an MLP alone and in
// two replicas, and a CNN's head.
TEST(TensorParallel, SlicesOffTheHostSumHostCopiesAndFollowTheCpuBitForBit) {
  testing::registerGuardedDevices();
  JobSpec cnn = tensorJob(2, 2);
  cnn.model.kind = ModelKind::kCnn;
  cnn.model.channels = {4, 8};
  cnn.model.kernel_size = 3;
  cnn.model.layers = {32};
  for (const auto& [what, cpu] : {std::pair{"mlp, 2 slices", tensorJob(2, 2)},
                                  {"mlp, 2 replicas of 2", tensorJob(4, 2)},
                                  {"cnn head, 2 slices", cnn}}) {
    JobSpec off = cpu;
    off.train.device = "guarded";
    off.parallel.device_collectives = DeviceCollectives::kHost;
    const auto want = trainWithThreads(cpu);
    const auto got = trainWithThreads(off);
    for (size_t r = 0; r < want.size(); ++r) {
      EXPECT_EQ(got[r].losses, want[r].losses) << what << " rank " << r;
      EXPECT_EQ(got[r].evals.back().test_loss, want[r].evals.back().test_loss) << what;
      EXPECT_EQ(got[r].stats.back().allreduces, want[r].stats.back().allreduces) << what;
    }
  }
}

// A GPT on a device whose memory the host may not touch, as a GPU's: its blocks, tied head,
// sampled text, clipped gradient, the pipeline's tied copies, ZeRO's held table and
// sequence parallelism's split rows touch device memory only through the device, and every
// layout is the CPU's bit for bit.
TEST(TensorParallel, GptOffTheHostFollowsTheCpuBitForBit) {
  testing::registerGuardedDevices();
  const Dataset train_set = lineWindows(0, 6000), test_set = lineWindows(6000, 7000);
  JobSpec base = gptJob(2, 1, "adamw");
  base.train.grad_clip = 0.5;
  base.train.sample_chars = 24;
  base.train.max_steps = 6;  // every guarded operation maps and unmaps its buffers
  JobSpec sliced = base, staged = base, three_d = base, zero_3 = base, staged_zero_2 = base;
  sliced.parallel.ranks = sliced.parallel.tensor = 2;
  staged.parallel.pipeline = 2;
  three_d.parallel.ranks = 8;
  three_d.parallel.tensor = three_d.parallel.pipeline = 2;
  // ZeRO through host copies (no NCCL): the held token table's buffers are the device's too.
  zero_3.parallel.zero = 3;
  staged_zero_2.parallel.ranks = 4;
  staged_zero_2.parallel.pipeline = 2;
  staged_zero_2.parallel.zero = 2;
  // Sequence parallelism: the gathers and reduce-scatters of a slice's rows on host copies.
  JobSpec split_rows = sliced, split_rows_3d = three_d;
  split_rows.parallel.sequence_parallel = split_rows_3d.parallel.sequence_parallel = true;
  for (const auto& [what, cpu] : {std::pair{"gpt, 2 data ranks", base},
                                  {"gpt, 2 slices", sliced},
                                  {"gpt, 2 stages", staged},
                                  {"gpt, 2 x 2 x 2", three_d},
                                  {"gpt, ZeRO 3", zero_3},
                                  {"gpt, 2 stages of 2 replicas, ZeRO 2", staged_zero_2},
                                  {"gpt, 2 slices, split rows", split_rows},
                                  {"gpt, 2 x 2 x 2, split rows", split_rows_3d}}) {
    JobSpec off = cpu;
    off.train.device = "guarded";
    off.parallel.device_collectives = DeviceCollectives::kHost;
    const auto want = trainWithThreads(cpu, train_set, test_set);
    const auto got = trainWithThreads(off, train_set, test_set);
    for (size_t r = 0; r < want.size(); ++r) {
      EXPECT_EQ(got[r].losses, want[r].losses) << what << " rank " << r;
      EXPECT_EQ(got[r].evals.back().test_loss, want[r].evals.back().test_loss) << what;
      EXPECT_EQ(sampleOf(got[r]), sampleOf(want[r])) << what;
    }
  }
}

// A sampled step's device pieces leave f and g out: their passes are the ring's, the
// device waits in them. Each piece's layer is its place in the slice ("tensor" event).
TEST(TensorParallel, DeviceTracesLeaveTheSlicesSumsOut) {
  JobSpec job = tensorJob(2, 2);
  job.telemetry.span_every = 5;
  const auto split = trainWithThreads(job);
  for (const auto& rank : split) {
    std::vector<std::string> layers;  // "Linear(784, 32)", ..., from the "tensor" event
    for (const std::string& event : rank.events) {
      if (event.rfind("tensor: ", 0) != 0) continue;
      std::string text = event.substr(event.find(": ", 8) + 2);
      text = text.substr(0, text.rfind(" ("));
      for (size_t at = 0; at != std::string::npos;) {
        const size_t next = text.find(" -> ", at);
        layers.push_back(text.substr(at, next == std::string::npos ? next : next - at));
        at = next == std::string::npos ? next : next + 4;
      }
    }
    ASSERT_FALSE(layers.empty());
    ASSERT_EQ(rank.device.size(), 4u) << "steps 5, 10, 15, 20";
    for (const auto& [step, spans] : rank.device) {
      int passes = 0;
      for (const DeviceSpan& s : spans) {
        if (s.layer < 0) continue;
        ASSERT_LT(size_t(s.layer), layers.size());
        EXPECT_EQ(layers[size_t(s.layer)].find("TensorSlices"), std::string::npos)
            << layers[size_t(s.layer)] << " at step " << step;
        ++passes;
      }
      EXPECT_GT(passes, 0);
    }
  }
}

TEST(TensorParallel, TwoReplicasOfTwoSlicesTrainAsTwoDataRanks) {
  const auto data = trainWithThreads(tensorJob(2, 1));
  const auto hybrid = trainWithThreads(tensorJob(4, 2));
  // Ranks 0, 1 are replica 0's slices, 2, 3 replica 1's (Megatron's numbering).
  expectSameTraining({hybrid[0], hybrid[1]}, data[0], "data 2 x tensor 2, replica 0");
  expectSameTraining({hybrid[2], hybrid[3]}, data[1], "data 2 x tensor 2, replica 1");
}

// Two pairs: g's all-reduce after each forward, f's before the second pair in backward (the
// first pair's input is the data); the replicas add their gradient all-reduce.
TEST(TensorParallel, OneAllreducePerPairForwardAndOnePerLaterPairBackward) {
  const auto split = trainWithThreads(tensorJob(2, 2));
  for (const auto& rank : split) {
    for (const StepStats& s : rank.stats) {
      EXPECT_EQ(s.allreduces, 3) << "step " << s.step;
      // g sums (B, 32) and (B, 16) outputs, f a (B, 32) input gradient; the ring moves
      // 2 (t - 1) / t of each.
      EXPECT_EQ(s.bytes_tx, (32 * 32 + 32 * 16 + 32 * 32) * 4) << "step " << s.step;
      EXPECT_GT(s.comm_ns, 0);
    }
  }
  const auto hybrid = trainWithThreads(tensorJob(4, 2));
  EXPECT_EQ(hybrid[3].stats.back().allreduces, 4);
}

}  // namespace
}  // namespace ranklab
