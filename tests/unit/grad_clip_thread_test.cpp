// train.grad_clip and the step's gradient norm with ranks as threads: the norm is the whole
// gradient's however the model or its update is split, and clipping is PyTorch's
// clip_grad_norm_ (every gradient times max_norm / (norm + 1e-6) when that is below 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/train/trainer.h"
#include "tests/support/thread_ranks.h"

namespace ranklab {
namespace {

using testing::trainWithThreads;

JobSpec clipJob(double clip) {
  JobSpec job;
  job.model.layers = {32, 16};
  job.train.epochs = 1;
  job.train.batch_size = 32;
  job.train.max_steps = 12;
  job.train.momentum = 0;
  job.train.lr = 0.1;
  job.train.grad_clip = clip;
  return job;
}

std::vector<double> normsOf(const testing::RunRecorder& rank) {
  std::vector<double> norms;
  for (const StepStats& s : rank.stats) norms.push_back(s.grad_norm);
  return norms;
}

double largestRelativeGap(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(1e-12, std::abs(b[i])));
  return worst;
}

// A clip above every norm changes nothing; a plain SGD step clipped to c moves the
// parameters as an unclipped one at lr * c / (norm + 1e-6) does, so one clipped step ends
// at the same test loss as one unclipped step at that rate (which also checks the norm).
TEST(GradClip, ClipsAsPyTorchsClipGradNorm) {
  const auto plain = trainWithThreads(clipJob(0));
  const auto loose = trainWithThreads(clipJob(1e5));
  EXPECT_EQ(loose[0].losses, plain[0].losses);
  EXPECT_EQ(normsOf(loose[0]), normsOf(plain[0]));
  for (double norm : normsOf(plain[0])) EXPECT_GT(norm, 0.05);

  JobSpec one = clipJob(0.05);
  one.train.max_steps = 1;
  const auto clipped = trainWithThreads(one);
  const double norm = clipped[0].stats[0].grad_norm;
  EXPECT_EQ(norm, plain[0].stats[0].grad_norm) << "the norm before clipping";
  JobSpec scaled = clipJob(0);
  scaled.train.max_steps = 1;
  scaled.train.lr = 0.1 * 0.05 / (norm + 1e-6);
  const auto same = trainWithThreads(scaled);
  const double a = clipped[0].evals.back().test_loss, b = same[0].evals.back().test_loss;
  std::printf("norm %.6f; test loss clipped %.9f, at the scaled rate %.9f\n", norm, a, b);
  EXPECT_NEAR(a, b, 1e-6 * b);
  EXPECT_GT(std::abs(a - plain[0].evals.back().test_loss), 1e-4) << "clipping did something";
}

// Data ranks measure the averaged gradient: every rank the same norm.
TEST(GradClip, DataRanksAgreeOnTheNorm) {
  JobSpec job = clipJob(0.5);
  job.parallel.ranks = 3;
  const auto ranks = trainWithThreads(job);
  for (const auto& rank : ranks) EXPECT_EQ(normsOf(rank), normsOf(ranks[0]));
}

// Split runs sum their parts of the gradient over the slices, stages or shards (one
// one-float all-reduce each, for each way it is split) and clip as the whole model does.
TEST(GradClip, SplitRunsMeasureAndClipTheWholeGradient) {
  JobSpec whole = clipJob(0.3);
  whole.model.layers = {32, 32, 16};
  whole.train.optimizer = OptimizerKind::kAdamW;
  whole.train.lr = 0.003;
  whole.parallel.ranks = 2;
  const auto reference = trainWithThreads(whole);
  JobSpec tensor = whole, pipeline = whole, zero = whole, three_d = whole, tensor_zero = whole;
  tensor.parallel.ranks = 4;
  tensor.parallel.tensor = 2;
  pipeline.parallel.ranks = 4;
  pipeline.parallel.pipeline = 2;
  zero.parallel.zero = 2;
  three_d.parallel.ranks = 8;
  three_d.parallel.pipeline = three_d.parallel.tensor = 2;
  tensor_zero.parallel.ranks = 4;
  tensor_zero.parallel.tensor = 2;
  tensor_zero.parallel.zero = 3;
  for (const auto& [what, job] : {std::pair{"tensor 2", tensor},
                                  {"pipeline 2", pipeline},
                                  {"zero 2", zero},
                                  {"pipeline 2 x tensor 2", three_d},
                                  {"tensor 2 x zero 3", tensor_zero}}) {
    const auto split = trainWithThreads(job);
    for (const auto& rank : split) {
      const double norms = largestRelativeGap(normsOf(rank), normsOf(reference[0]));
      std::printf("%s: largest relative gap in the norm %.3g\n", what, norms);
      EXPECT_LT(norms, 1e-5) << what;
      EXPECT_NEAR(rank.evals.back().test_loss, reference[0].evals.back().test_loss,
                  1e-5 * reference[0].evals.back().test_loss)
          << what;
    }
  }
  // Unclipped, a split run adds no collective to measure: it records no norm.
  tensor.train.grad_clip = 0;
  for (const auto& rank : trainWithThreads(tensor))
    for (double norm : normsOf(rank)) EXPECT_EQ(norm, 0.0);
}

}  // namespace
}  // namespace ranklab
