// AMP in the engine: bf16 / fp16 layers against fp32 on the same weights, and the training
// loop's loss scaling with an injected overflow (a loss scale far too large for fp16),
// skipped on every rank together; compression and AMP together.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/model/models.h"
#include "kernels/cpu/mixed_gemm.h"
#include "tests/support/thread_ranks.h"

namespace ranklab {
namespace {

struct Gradients {
  double loss = 0;
  std::vector<float> grads;
};

Gradients lossAndGradients(kernels::Precision precision, bool head_fp32, int model_kind,
                           float loss_scale = 1.f) {
  const Shape image{28, 28, 1};
  Network model = model_kind == 0 ? makeMlp(image, {256, 128}, 10, 0.f, 3)
                                  : makeCnn(image, {4, 8}, 5, {32}, 10, 0.f, 3);
  model.setPrecision(precision, head_fp32);
  const int batch = 32;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> x(batch * image.size());
  for (auto& v : x) v = normal(rng);
  std::vector<uint8_t> y(batch);
  for (auto& v : y) v = static_cast<uint8_t>(rng() % 10);
  Gradients out;
  out.loss = model.forward(x.data(), y.data(), batch).loss_sum / batch;
  model.setLossScale(loss_scale);
  model.zeroGrads();
  model.backward(x.data(), y.data(), batch);
  out.grads.assign(model.grads(), model.grads() + model.parameterCount());
  for (float& g : out.grads) g /= loss_scale;
  return out;
}

// Cosine similarity, and the size of the difference relative to the fp32 gradient's (an
// element-wise bound would not do: a pre-activation that rounds across 0 switches a ReLU,
// which moves single gradient elements by whole samples' contributions).
void expectClose(const Gradients& low, const Gradients& ref, double loss_tol, double min_cos,
                 double max_rel, const std::string& what) {
  EXPECT_NEAR(low.loss, ref.loss, loss_tol * ref.loss) << what;
  double dot = 0, a2 = 0, b2 = 0, d2 = 0;
  for (size_t i = 0; i < ref.grads.size(); ++i) {
    const double a = low.grads[i], b = ref.grads[i];
    dot += a * b, a2 += a * a, b2 += b * b, d2 += (a - b) * (a - b);
  }
  const double cosine = dot / std::sqrt(a2 * b2), relative = std::sqrt(d2 / b2);
  std::printf("%s: loss %.6f vs %.6f, gradient cosine %.6f, |difference| / |fp32| %.4f\n",
              what.c_str(), low.loss, ref.loss, cosine, relative);
  EXPECT_GT(cosine, min_cos) << what;
  EXPECT_LT(relative, max_rel) << what;
}

// bf16 keeps 8 significant bits, fp16 11 (with a loss scale, as AMP runs it), so fp16 stays
// closer; both keep the gradient's direction.
TEST(AmpLayers, LowPrecisionNetworksFollowFp32) {
  using kernels::Precision;
  for (int kind : {0, 1}) {
    const std::string model = kind == 0 ? "mlp" : "cnn";
    const auto ref = lossAndGradients(Precision::kFp32, false, kind);
    expectClose(lossAndGradients(Precision::kBf16, false, kind), ref, 1e-2, 0.995, 0.1,
                model + " bf16");
    expectClose(lossAndGradients(Precision::kBf16, true, kind), ref, 1e-2, 0.995, 0.1,
                model + " bf16, fp32 head");
    expectClose(lossAndGradients(Precision::kFp16, false, kind, 1024.f), ref, 1e-3, 0.999, 0.05,
                model + " fp16, scale 1024");
  }
}

class AmpRecorder : public TrainObserver {
 public:
  void onStep(const StepStats& s) override { steps.push_back(s); }
  void onEval(const EvalStats& e) override { evals.push_back(e); }
  void onEvent(const std::string& kind, const std::string& text, int64_t step) override {
    if (kind != "overflow") return;
    overflow_events.push_back(step);
    overflow_texts.push_back(text);
  }
  std::vector<StepStats> steps;
  std::vector<EvalStats> evals;
  std::vector<int64_t> overflow_events;
  std::vector<std::string> overflow_texts;
};

std::vector<AmpRecorder> trainRanks(const JobSpec& job) {
  ThreadRendezvous rendezvous(job.parallel.ranks);
  std::vector<AmpRecorder> recorders(job.parallel.ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < job.parallel.ranks; ++r) {
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(rendezvous, r);
      train(job, comm, testing::smallTrainSet(), testing::smallTestSet(), recorders[r]);
    });
  }
  for (auto& t : threads) t.join();
  return recorders;
}

// A 32-unit MLP on 4000 Fashion-MNIST images, 25 per rank and step.
JobSpec smallAmpJob(int ranks, const std::string& dtype, int epochs) {
  JobSpec job;
  job.model.layers = {32};
  job.train.batch_size = 25;
  job.train.epochs = epochs;
  job.parallel.ranks = ranks;
  job.amp.dtype = choiceFrom<AmpDtype>(dtype);
  return job;
}

// 2^40 times a gradient overflows fp16 (max 65504) at once: steps are skipped, each halving
// the scale, until it fits; then training proceeds and the scale stays put.
TEST(AmpTraining, InjectedFp16OverflowSkipsStepsOnEveryRankUntilTheScaleFits) {
  JobSpec job = smallAmpJob(2, "fp16", 1);
  job.amp.init_scale = std::ldexp(1.0, 40);
  const auto ranks = trainRanks(job);
  const auto& steps = ranks[0].steps;
  ASSERT_EQ(steps.size(), 4000u / 2 / 25);
  int skipped = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    ASSERT_EQ(steps[i].overflow, ranks[1].steps[i].overflow) << "ranks disagree at " << i;
    if (!steps[i].overflow) continue;
    ++skipped;
    EXPECT_EQ(steps[i].bytes_tx, 0) << "an overflow step must not send its gradients";
    if (i + 1 < steps.size()) {
      EXPECT_EQ(steps[i + 1].loss_scale, steps[i].loss_scale / 2);
    }
  }
  EXPECT_GE(skipped, 20) << "2^40 needs at least 20 halvings before fp16 gradients fit";
  EXPECT_FALSE(steps.back().overflow);
  EXPECT_EQ(ranks[0].overflow_events.size(), static_cast<size_t>(skipped));
  EXPECT_EQ(ranks[0].overflow_texts.front(),
            "inf/NaN in the gradients: update skipped, loss scale 1.09951e+12 -> 5.49756e+11");
  EXPECT_TRUE(std::isfinite(ranks[0].evals.back().test_loss));
  EXPECT_GT(ranks[0].evals.back().test_accuracy, 0.5);
}

// ZeRO 2 and 3 keep no whole gradient: each rank unscales and checks the shard its per-layer
// reduce-scatters summed. The scale is a power of 2, so the bits are ZeRO 1's (which unscales
// each rank's whole gradient before the sum): the same losses, the same skipped steps (fp16
// from 2^40, overflowing until the scale fits) and scales, on 3 ranks, fp16 and bf16.
TEST(AmpTraining, ZeroTwoAndThreeUnscaleTheirShardsAndFollowZeroOneBitForBit) {
  for (const char* dtype : {"fp16", "bf16"}) {
    JobSpec job = smallAmpJob(3, dtype, 1);
    job.amp.init_scale = std::ldexp(1.0, 40);
    job.amp.growth_interval = 7;
    job.train.max_steps = 40;
    job.parallel.zero = 1;
    const auto one = trainRanks(job);
    int skipped = 0;
    for (const StepStats& s : one[0].steps) skipped += s.overflow ? 1 : 0;
    if (std::string(dtype) == "fp16") {
      EXPECT_GT(skipped, 10) << "2^40 overflows fp16 for the first steps";
    }
    for (int stage : {2, 3}) {
      job.parallel.zero = stage;
      const auto got = trainRanks(job);
      for (size_t r = 0; r < got.size(); ++r) {
        ASSERT_EQ(got[r].steps.size(), one[r].steps.size());
        for (size_t i = 0; i < got[r].steps.size(); ++i) {
          const StepStats &a = got[r].steps[i], &b = one[r].steps[i];
          ASSERT_EQ(a.loss, b.loss) << dtype << " zero " << stage << " rank " << r << " step " << i;
          ASSERT_EQ(a.overflow, b.overflow) << dtype << " zero " << stage << " step " << i;
          ASSERT_EQ(a.loss_scale, b.loss_scale) << dtype << " zero " << stage << " step " << i;
          // A skipped step's per-layer reduce-scatters moved bytes all the same.
          if (a.overflow) {
            EXPECT_GT(a.bytes_tx, 0);
          }
        }
        EXPECT_EQ(got[r].evals.back().test_loss, one[r].evals.back().test_loss);
      }
    }
    std::printf("%s: ZeRO 2 and 3 as ZeRO 1 over 40 steps, %d of them skipped on overflow\n", dtype,
                skipped);
  }
}

// A scale past 2^63 is printed as it is, not as an int64 that wrapped.
TEST(AmpTraining, OverflowEventPrintsAScalePastTheInt64Range) {
  JobSpec job = smallAmpJob(1, "fp16", 1);
  job.amp.init_scale = 1e25;
  job.train.max_steps = 1;
  const auto ranks = trainRanks(job);
  ASSERT_FALSE(ranks[0].overflow_texts.empty());
  EXPECT_EQ(ranks[0].overflow_texts.front(),
            "inf/NaN in the gradients: update skipped, loss scale 1e+25 -> 5e+24");
}

TEST(AmpTraining, GrowsTheScaleAfterGrowthIntervalCleanSteps) {
  JobSpec job = smallAmpJob(1, "bf16", 1);
  job.amp.init_scale = 8;
  job.amp.growth_interval = 10;
  const auto steps = trainRanks(job)[0].steps;
  ASSERT_EQ(steps.size(), 160u);
  EXPECT_EQ(steps[0].loss_scale, 8);
  EXPECT_EQ(steps[9].loss_scale, 8);
  EXPECT_EQ(steps[10].loss_scale, 16);
  EXPECT_EQ(steps[159].loss_scale, 8 * std::pow(2, 15));
}

TEST(AmpTraining, Bf16WithTopkCompressionLearns) {
  JobSpec job = smallAmpJob(2, "bf16", 2);
  job.compression.codec = "topk";
  job.compression.ratio = 0.05;
  const auto ranks = trainRanks(job);
  const auto& last = ranks[0].steps.back();
  EXPECT_GT(last.compress_ns, 0);
  EXPECT_LT(last.bytes_tx * 5, last.bytes_raw) << "topk 5% should send far less";
  EXPECT_GT(ranks[0].evals.back().test_accuracy, 0.65);
  EXPECT_EQ(ranks[0].evals.back().test_accuracy, ranks[1].evals.back().test_accuracy);
}

}  // namespace
}  // namespace ranklab
