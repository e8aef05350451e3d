// Checkpoints of a model split over ranks (pipeline stages, tensor slices, ZeRO shards
// inside them): the file holds the whole model, gathered from the first replica's parts, so
// a run resumes from it bit for bit on its own layout and goes on from it on another one
// (another data-parallel degree, or no split at all).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/train/checkpoint.h"
#include "tests/support/temp_folder.h"
#include "tests/support/thread_ranks.h"
#include "tests/support/tiny_gpt.h"

namespace ranklab {
namespace {

using testing::trainWithThreads;

// 784-64-32-32-16-10 with AdamW: two Linear pairs to split, four layers to stage.
JobSpec mlpJob(int ranks, int pipeline, int tensor, int64_t max_steps) {
  JobSpec job;
  job.model.layers = {64, 32, 32, 16};
  job.train.epochs = 1;
  job.train.batch_size = 32;
  job.train.max_steps = max_steps;
  job.train.optimizer = OptimizerKind::kAdamW;
  job.train.lr = 0.002;
  job.train.lr_schedule = LrScheduleKind::kCosine;
  job.parallel.ranks = ranks;
  job.parallel.pipeline = pipeline;
  job.parallel.tensor = tensor;
  job.parallel.microbatches = pipeline > 1 ? 2 : 1;
  return job;
}

// A GPT of 2 blocks, 4 heads of width 8, on windows of 16 bytes of a repeated line, clipped.
JobSpec gptJob(int ranks, int pipeline, int tensor, int64_t max_steps) {
  JobSpec job = testing::tinyGpt(mlpJob(ranks, pipeline, tensor, max_steps));
  job.train.grad_clip = 0.5;
  return job;
}

const Dataset& lines(bool train) {
  static const Dataset train_set = testing::lineWindows(0, 6000),
                       test_set = testing::lineWindows(6000, 7000);
  return train ? train_set : test_set;
}

// Every rank's loss at every step.
using Losses = std::map<std::pair<int, int64_t>, double>;

Losses train(const JobSpec& job) {
  const bool text = job.data.dataset == DatasetKind::kText;
  const auto ranks =
      text ? trainWithThreads(job, lines(true), lines(false)) : trainWithThreads(job);
  Losses losses;
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (size_t i = 0; i < ranks[r].steps.size(); ++i)
      losses[{static_cast<int>(r), ranks[r].steps[i]}] = ranks[r].losses[i];
  }
  return losses;
}

class SplitCheckpoint : public ::testing::Test {
 protected:
  // make(k) writes a checkpoint at step k; make(k + more) resumed from it must give every
  // rank's losses of an uninterrupted make(k + more), bit for bit.
  void expectResumeContinues(const std::function<JobSpec(int64_t)>& make, int64_t k, int64_t more,
                             const std::string& name) {
    const Losses uninterrupted = train(make(k + more));
    JobSpec first = make(k);
    first.train.checkpoint_path = folder_.file(name);
    train(first);
    EXPECT_EQ(readCheckpoint(folder_.file(name)).step, k) << name;
    JobSpec rest = make(k + more);
    rest.train.resume_from = folder_.file(name);
    const Losses resumed = train(rest);
    ASSERT_EQ(resumed.size(), static_cast<size_t>(more * rest.parallel.ranks)) << name;
    for (const auto& [at, loss] : resumed)
      ASSERT_EQ(loss, uninterrupted.at(at))
          << name << ": rank " << at.first << " step " << at.second;
  }

  testing::TempFolder folder_;
};

TEST_F(SplitCheckpoint, ThreeDimensionalRunsResumeBitForBit) {
  expectResumeContinues([](int64_t steps) { return mlpJob(8, 2, 2, steps); }, 12, 10,
                        "mlp-3d.ckpt");
  expectResumeContinues([](int64_t steps) { return gptJob(8, 2, 2, steps); }, 12, 10,
                        "gpt-3d.ckpt");
  // ZeRO 1 inside tensor slices: the shards are gathered per slice, then the slices.
  expectResumeContinues(
      [](int64_t steps) {
        JobSpec job = gptJob(4, 1, 2, steps);
        job.parallel.zero = 1;
        return job;
      },
      12, 10, "gpt-tensor-zero.ckpt");
  // ZeRO 3 under a pipeline of slices (one micro-batch): each part's parameters are shards.
  expectResumeContinues(
      [](int64_t steps) {
        JobSpec job = mlpJob(8, 2, 2, steps);
        job.parallel.zero = 3;
        job.parallel.microbatches = 1;
        return job;
      },
      12, 10, "mlp-3d-zero3.ckpt");
}

// The 3D run's file is the whole model: within float rounding of a 2-rank data-parallel
// run's (the same global batch; the slices only add in another order), and resumed on those
// 2 plain ranks it trains on as they do.
TEST_F(SplitCheckpoint, TheFileHoldsTheWholeModelAndResumesOnAnotherLayout) {
  const int64_t k = 15;
  JobSpec split = mlpJob(8, 2, 2, k);
  split.train.checkpoint_path = folder_.file("3d.ckpt");
  train(split);
  JobSpec plain = mlpJob(2, 1, 1, k);
  plain.train.checkpoint_path = folder_.file("plain.ckpt");
  train(plain);
  const Checkpoint whole = readCheckpoint(folder_.file("3d.ckpt"));
  const Checkpoint want = readCheckpoint(folder_.file("plain.ckpt"));
  EXPECT_EQ(whole.model, want.model);
  EXPECT_EQ(whole.world, 8);
  EXPECT_EQ(whole.replicas, 2);
  const double params_gap = testing::largestVectorGap(whole.params, want.params);
  EXPECT_LT(params_gap, 1e-4);  // Adam's steps scale a rounding up; the losses agree to 1e-7
  ASSERT_EQ(whole.optimizer_state.tensors.size(), want.optimizer_state.tensors.size());
  for (size_t t = 0; t < want.optimizer_state.tensors.size(); ++t) {
    EXPECT_LT(testing::largestVectorGap(whole.optimizer_state.tensors[t].second,
                                        want.optimizer_state.tensors[t].second),
              1e-4)
        << want.optimizer_state.tensors[t].first;
  }
  // On 2 plain ranks (another world: elastic), then on data 1 x pipeline 2 x tensor 2.
  const Losses uninterrupted = train(mlpJob(2, 1, 1, k + 10));
  JobSpec onto_plain = mlpJob(2, 1, 1, k + 10);
  onto_plain.train.resume_from = folder_.file("3d.ckpt");
  onto_plain.train.elastic = true;
  const Losses resumed = train(onto_plain);
  ASSERT_EQ(resumed.size(), 20u);
  double worst = 0;
  for (const auto& [at, loss] : resumed)
    worst = std::max(worst, std::abs(loss - uninterrupted.at(at)) / uninterrupted.at(at));
  EXPECT_LT(worst, 1e-4);
  std::printf(
      "3D checkpoint vs data-parallel's: parameters %.3g apart; resumed on 2 plain ranks, "
      "losses within %.3g of theirs\n",
      params_gap, worst);
  // On one replica of the same stages and slices, as the plain run's file goes on on 1 rank.
  JobSpec fewer = mlpJob(4, 2, 2, k + 10);
  fewer.train.resume_from = folder_.file("3d.ckpt");
  fewer.train.elastic = true;
  const Losses narrower = train(fewer);
  JobSpec one = mlpJob(1, 1, 1, k + 10);
  one.train.resume_from = folder_.file("plain.ckpt");
  one.train.elastic = true;
  const Losses alone = train(one);
  ASSERT_EQ(narrower.size(), 40u);
  ASSERT_EQ(alone.size(), 10u);
  double narrower_gap = 0;
  for (const auto& [at, loss] : alone) {
    const double got = narrower.at({3, at.second});  // the last stage's second slice
    narrower_gap = std::max(narrower_gap, std::abs(got - loss) / loss);
  }
  EXPECT_LT(narrower_gap, 1e-4);
  std::printf("resumed on data 1 x pipeline 2 x tensor 2: losses within %.3g of 1 rank's\n",
              narrower_gap);
}

// A pipelined GPT's head holds its own copy of the token table (Megatron's), so its whole
// model is not the unpipelined one's: resuming it there says so, naming both.
TEST_F(SplitCheckpoint, APipelinedGptsCheckpointNamesTheModelItHolds) {
  JobSpec staged = gptJob(2, 2, 1, 5);
  staged.train.checkpoint_path = folder_.file("staged.ckpt");
  train(staged);
  const Checkpoint c = readCheckpoint(folder_.file("staged.ckpt"));
  EXPECT_NE(c.model.find("weight=a copy of"), std::string::npos) << c.model;
  JobSpec flat = gptJob(2, 1, 2, 10);
  flat.train.resume_from = folder_.file("staged.ckpt");
  try {
    train(flat);
    FAIL() << "resumed another model";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("the checkpoint's model is"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ranklab
