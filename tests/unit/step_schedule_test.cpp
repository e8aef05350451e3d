// The step schedule's seams: a network run as a stage (layers alone, then the head apart),
// and micro-batches whose accumulated gradients equal one pass over the whole batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "engine/model/models.h"
#include "engine/model/softmax_cross_entropy.h"
#include "engine/train/step_schedule.h"
#include "tests/support/thread_ranks.h"

namespace ranklab {
namespace {

Batch randomBatch(int size, size_t features, int classes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  Batch b;
  for (size_t i = 0; i < size * features; ++i) b.images.push_back(normal(rng));
  for (int i = 0; i < size; ++i) b.labels.push_back(static_cast<uint8_t>(rng() % classes));
  return b;
}

std::vector<float> gradients(const Network& model) {
  return {model.grads(), model.grads() + model.parameterCount()};
}

// Largest |a - b| over the largest |b|: a relative error that ignores near-zero entries.
double relativeGap(const std::vector<float>& a, const std::vector<float>& b) {
  double gap = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    gap = std::max(gap, static_cast<double>(std::abs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::abs(b[i])));
  }
  return gap / scale;
}

// A two-stage split by hand: stage 1's layers, the head on stage 2's output, stage 2's
// input gradient fed back into stage 1: the same gradients as the whole network's pass.
TEST(NetworkStage, LayersAloneThenTheHeadApartGiveTheWholePassesGradients) {
  const Shape in{1, 1, 20};
  Network whole = makeMlp(in, {16, 12}, 5, 0.f, 7);
  const Batch b = randomBatch(9, in.size(), 5, 3);
  whole.forward(b.images.data(), b.labels.data(), 9);
  whole.zeroGrads();
  whole.backward(b.images.data(), b.labels.data(), 9);

  Network stage = makeMlp(in, {16, 12}, 5, 0.f, 7);
  SoftmaxCrossEntropy head;
  const float* logits = stage.forwardActivations(b.images.data(), 9);
  head.forward(logits, b.labels.data(), 9, 5);
  head.backward(stage.outputGradient(), b.labels.data(), 9, 1.f / 9);
  std::vector<float> dx(9 * in.size(), 0.f);
  stage.zeroGrads();
  stage.backwardFrom(b.images.data(), dx.data(), 9);
  EXPECT_EQ(gradients(stage), gradients(whole));
  // The input gradient reaches the caller (a previous stage would receive it).
  EXPECT_GT(*std::max_element(dx.begin(), dx.end(),
                              [](float a, float c) { return std::abs(a) < std::abs(c); }),
            0.f);
}

TEST(DataParallelSchedule, MicroBatchesAccumulateTheWholeBatchesGradient) {
  const Shape in{1, 1, 30};
  const Batch b = randomBatch(25, in.size(), 10, 11);
  Network one = makeMlp(in, {24, 16}, 10, 0.f, 5);
  DataParallelSchedule(1).run(one, b, 1.f, {});
  for (int slices : {2, 4, 7, 25}) {
    Network many = makeMlp(in, {24, 16}, 10, 0.f, 5);
    int released = 0;
    StepHooks hooks;
    hooks.on_ready = [&](size_t, size_t) { ++released; };
    const PassTimes times = DataParallelSchedule(slices).run(many, b, 1.f, hooks);
    EXPECT_LT(relativeGap(gradients(many), gradients(one)), 1e-6) << slices << " slices";
    EXPECT_EQ(released, 3) << "buckets leave during the last slice's backward only";
    EXPECT_GT(times.loss_sum, 0);
  }
}

// Whole runs, ranks as threads: 4 micro-batches per step follow the loss curve of one.
TEST(DataParallelSchedule, MicroBatchedRunFollowsTheWholeBatchRun) {
  JobSpec job;
  job.model.layers = {32};
  job.train.batch_size = 24;
  job.train.max_steps = 20;
  job.parallel.ranks = 2;
  const auto whole = testing::trainWithThreads(job);
  job.parallel.microbatches = 4;
  const auto sliced = testing::trainWithThreads(job);
  ASSERT_EQ(whole[0].losses.size(), 20u);
  ASSERT_EQ(sliced[0].losses.size(), 20u);
  for (size_t i = 0; i < 20; ++i)
    EXPECT_NEAR(sliced[0].losses[i], whole[0].losses[i], 1e-5 * whole[0].losses[i]) << i;
}

// train.accumulate_steps = 4 on batches of 16 takes the samples of one batch of 64 (the
// loader deals consecutive slices of one permutation) and adds their gradients, each
// weighted 1/4: the same updates as batches of 64, with the same steps per epoch, samples
// and learning-rate schedule. Adam, so a wrongly scaled gradient shows.
TEST(GradientAccumulation, FourBatchesOfSixteenStepAsOneOfSixtyFour) {
  JobSpec job;
  job.model.layers = {32};
  job.train.optimizer = OptimizerKind::kAdam;
  job.train.lr = 0.003;
  job.train.lr_schedule = LrScheduleKind::kCosine;
  job.train.epochs = 2;
  job.parallel.ranks = 2;
  job.train.batch_size = 64;
  const auto large = testing::trainWithThreads(job);
  job.train.batch_size = 16;
  job.train.accumulate_steps = 4;
  const auto accumulated = testing::trainWithThreads(job);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(accumulated[r].losses.size(), large[r].losses.size());
    ASSERT_EQ(accumulated[r].losses.size(), 2u * (2000 / 64));
    double worst = 0;
    for (size_t i = 0; i < large[r].losses.size(); ++i) {
      worst = std::max(
          worst, std::abs(accumulated[r].losses[i] - large[r].losses[i]) / large[r].losses[i]);
      EXPECT_EQ(accumulated[r].stats[i].samples, 64);
    }
    std::printf("rank %d: largest relative loss gap over %zu steps %.3g\n", r,
                large[r].losses.size(), worst);
    EXPECT_LT(worst, 1e-6);
    EXPECT_NEAR(accumulated[r].evals.back().test_loss, large[r].evals.back().test_loss,
                1e-6 * large[r].evals.back().test_loss);
  }
}

}  // namespace
}  // namespace ranklab
