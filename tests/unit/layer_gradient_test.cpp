// Every layer's backward against central finite differences of its forward, for the input
// gradient and every parameter; then whole networks (MLP, CNN) through the softmax
// cross-entropy. Tolerance: |analytic - numeric| <= 2e-3 * max(1, |numeric|), central
// differences with eps 1e-2 (layers) or 1e-3 (networks), losses summed in double over
// float forward passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "engine/model/layers.h"
#include "engine/model/models.h"
#include "engine/model/softmax_cross_entropy.h"
#include "engine/model/transformer_block.h"
#include "engine/model/transformer_layers.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/gemm.h"

namespace ranklab {
namespace {

constexpr float kEps = 1e-2f;
constexpr double kTolerance = 2e-3;
// Smaller for whole networks, where kinks are everywhere; the loss is a mean of O(1) terms,
// so float rounding still costs only about 1e-4 of the difference quotient.
constexpr float kNetworkEps = 1e-3f;

std::vector<float> normal(size_t n, uint64_t seed, float scale = 1.f) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::normal_distribution<float> dist(0.f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Tracks the largest difference and fails on any beyond the tolerance.
struct DiffCheck {
  double worst = 0;
  size_t checked = 0;
  void expect(double analytic, double numeric, const std::string& what) {
    const double diff = std::abs(analytic - numeric);
    worst = std::max(worst, diff);
    ++checked;
    EXPECT_LE(diff, kTolerance * std::max(1.0, std::abs(numeric)))
        << what << ": analytic " << analytic << ", numeric " << numeric;
  }
  void report(const std::string& name) const {
    std::printf("%s: largest |analytic - finite difference| = %.3g over %zu values\n", name.c_str(),
                worst, checked);
  }
};

// (f(v + eps) - f(v - eps)) / 2 eps, where f reads `value`; leaves `value` as it was.
template <class F>
double centralDifference(float& value, float eps, F f) {
  const float saved = value;
  value = saved + eps;
  const double up = f();
  value = saved - eps;
  const double down = f();
  value = saved;
  return (up - down) / (2 * eps);
}

// Checks a layer with the probe loss L = sum(r * y) for a fixed random r, so dL/dy = r.
void checkLayer(Layer& layer, std::vector<float> x, int batch, uint64_t seed) {
  kernels::setBlasThreads(1);  // one thread per rank: the GEMMs the trainer's ranks run
  size_t count = 0;
  for (const auto& t : layer.paramTensors()) count += t.size;
  std::vector<float> params(count), grads(count, 0.f);
  layer.bind(params.data(), grads.data());
  std::mt19937_64 rng(seed);
  layer.init(rng);

  ForwardPass pass;
  pass.dropout_key = seed;
  const size_t out = batch * layer.outputShape().size();
  const std::vector<float> r = normal(out, seed + 1);
  std::vector<float> y(out), dx(x.size());
  auto probe = [&] {
    layer.forward(x.data(), y.data(), batch, pass);
    double sum = 0;
    for (size_t i = 0; i < out; ++i) sum += static_cast<double>(r[i]) * y[i];
    return sum;
  };
  probe();
  layer.backward(x.data(), y.data(), r.data(), dx.data(), batch);

  DiffCheck check;
  for (size_t i = 0; i < x.size(); ++i) {
    check.expect(dx[i], centralDifference(x[i], kEps, probe), "dx[" + std::to_string(i) + "]");
  }
  for (size_t i = 0; i < count; ++i) {
    check.expect(grads[i], centralDifference(params[i], kEps, probe),
                 "dparam[" + std::to_string(i) + "]");
  }
  check.report(layer.describe());
}

// Values whose gaps all exceed 2 eps, so no kink (ReLU at 0, a max-pool tie) lies within a
// finite-difference step of any input.
std::vector<float> awayFromKinks(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  const int middle = static_cast<int>(n / 2);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(static_cast<int>(i) - middle) * 0.05f + 0.025f;
  std::shuffle(v.begin(), v.end(), std::mt19937(static_cast<uint32_t>(seed)));
  return v;
}

TEST(LayerGradient, Linear) {
  Linear layer("fc0", {1, 1, 7}, 5);
  checkLayer(layer, normal(3 * 7, 1), 3, 2);
}

// The pair Linear + ReLU run as one: y is the ReLU's output, dy arrives through it.
TEST(LayerGradient, LinearAbsorbingTheFollowingRelu) {
  Linear layer("fc0", {1, 1, 7}, 5);
  ASSERT_TRUE(layer.absorbFollowingRelu());
  checkLayer(layer, normal(3 * 7, 1), 3, 2);
}

TEST(LayerGradient, Conv2dWithPaddingAndSeveralChannels) {
  Conv2d layer("conv0", {5, 6, 3}, 4, 3);  // (H, W, C) = 5x6x3 -> 5x6x4
  checkLayer(layer, normal(2 * 5 * 6 * 3, 3), 2, 4);
}

TEST(LayerGradient, Conv2dFiveByFiveSingleChannel) {
  Conv2d layer("conv0", {7, 7, 1}, 2, 5);
  checkLayer(layer, normal(2 * 7 * 7, 5), 2, 6);
}

TEST(LayerGradient, MaxPool2dIncludingAnOddEdge) {
  MaxPool2d layer("pool0", {5, 4, 3});  // floor mode: the 5th row is dropped
  checkLayer(layer, awayFromKinks(2 * 5 * 4 * 3, 7), 2, 8);
}

TEST(LayerGradient, ReLU) {
  ReLU layer("relu0", {1, 1, 11});
  checkLayer(layer, awayFromKinks(3 * 11, 9), 3, 10);
}

TEST(LayerGradient, DropoutWithAFixedMask) {
  Dropout layer("drop0", {1, 1, 13}, 0.4f);
  checkLayer(layer, normal(3 * 13, 11), 3, 12);
}

TEST(LayerGradient, FlattenChannelsLastToPyTorchOrder) {
  Flatten layer("flatten0", {3, 2, 4});
  checkLayer(layer, normal(2 * 3 * 2 * 4, 13), 2, 14);
}

// ---- The GPT's layers: sequences of 5 positions ----

TEST(LayerGradient, LayerNormOverEachPosition) {
  LayerNorm layer("ln_1", {5, 1, 6});
  std::mt19937_64 rng(1);
  checkLayer(layer, normal(2 * 5 * 6, 21), 2, 22);
}

TEST(LayerGradient, Gelu) {
  Gelu layer("gelu", {5, 1, 4});
  checkLayer(layer, normal(2 * 5 * 4, 23, 2.f), 2, 24);
}

TEST(LayerGradient, CausalSelfAttentionOfTwoHeads) {
  CausalSelfAttention layer("attn", {5, 1, 3 * 6}, 2);
  checkLayer(layer, normal(2 * 5 * 3 * 6, 25), 2, 26);
}

// Its input is token ids, which have no gradient: its two tables alone.
TEST(LayerGradient, EmbeddingTokenAndPositionTables) {
  Embedding layer("embed", 5, 7, 3);
  const std::vector<float> tokens = {0, 3, 6, 3, 1, 2, 2, 5, 0, 6};  // 2 sequences of 5
  size_t count = 0;
  for (const auto& t : layer.paramTensors()) count += t.size;
  std::vector<float> params(count), grads(count, 0.f);
  layer.bind(params.data(), grads.data());
  std::mt19937_64 rng(27);
  layer.init(rng);
  const std::vector<float> r = normal(2 * 5 * 3, 28);
  std::vector<float> y(r.size());
  auto probe = [&] {
    layer.forward(tokens.data(), y.data(), 2, {});
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i) sum += static_cast<double>(r[i]) * y[i];
    return sum;
  };
  probe();
  layer.backward(tokens.data(), y.data(), r.data(), nullptr, 2);
  DiffCheck check;
  for (size_t i = 0; i < count; ++i)
    check.expect(grads[i], centralDifference(params[i], kEps, probe),
                 "dparam " + std::to_string(i));
  check.report(layer.describe());
  const std::vector<float> bad = {0, 1, 7, 1, 1};  // 7 is not below the vocabulary
  EXPECT_THROW(layer.forward(bad.data(), y.data(), 1, {}), std::out_of_range);
}

TEST(LayerGradient, TransformerBlockWithDropout) {
  const GptShape shape{7, 5, 6, 2, 1, 0.2f};
  TransformerBlock layer("h0", shape, cpuDevice());
  checkLayer(layer, normal(2 * 5 * 6, 29), 2, 30);
}

// The loss head: d(mean softmax cross-entropy)/d(logits) against finite differences.
TEST(LayerGradient, SoftmaxCrossEntropy) {
  const int batch = 4, classes = 5;
  std::vector<float> logits = normal(batch * classes, 15, 2.f), probs(logits.size()),
                     grad(logits.size());
  const std::vector<uint8_t> labels = {0, 3, 4, 3};
  auto mean_loss = [&] {
    return kernels::softmaxXentForward(logits.data(), labels.data(), probs.data(), batch, classes)
               .loss_sum /
           batch;
  };
  mean_loss();
  kernels::softmaxXentBackward(grad.data(), probs.data(), labels.data(), batch, classes,
                               1.f / batch);
  DiffCheck check;
  for (size_t i = 0; i < logits.size(); ++i) {
    check.expect(grad[i], centralDifference(logits[i], kEps, mean_loss),
                 "dlogits[" + std::to_string(i) + "]");
  }
  check.report("softmax cross-entropy");
}

// Whole networks: every parameter against finite differences of the mean loss. Random
// data always puts some ReLU kink or max-pool near-tie within a step of some parameter;
// there the central differences at eps and eps/2 disagree, and that parameter is skipped
// (at most 5% of them may be). Where they agree the loss is smooth and the check is strict.
void checkNetwork(Network& model, int batch, uint64_t seed, const std::string& name) {
  kernels::setBlasThreads(1);
  const std::vector<float> x = normal(batch * model.inputShape().size(), seed);
  std::vector<uint8_t> labels;
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int i = 0; i < batch; ++i) labels.push_back(static_cast<uint8_t>(rng() % model.classes()));
  // Dropout must draw the same mask in every pass: rewind its stream before each one.
  auto loss = [&] {
    model.setTrainingPasses(0);
    return model.forward(x.data(), labels.data(), batch).loss_sum / batch;
  };
  loss();
  model.zeroGrads();
  model.backward(x.data(), labels.data(), batch);
  const std::vector<float> analytic(model.grads(), model.grads() + model.parameterCount());
  DiffCheck check;
  size_t skipped = 0;
  for (size_t i = 0; i < model.parameterCount(); ++i) {
    float& p = model.params()[i];
    const double coarse = centralDifference(p, kNetworkEps, loss);
    const double fine = centralDifference(p, kNetworkEps / 2, loss);
    if (std::abs(coarse - fine) > kTolerance * std::max(1.0, std::abs(fine))) {
      ++skipped;
      continue;
    }
    check.expect(analytic[i], fine, "parameter " + std::to_string(i));
  }
  EXPECT_LE(skipped, model.parameterCount() / 20) << "too many parameters near a kink";
  check.report(name + " (" + std::to_string(skipped) + " near a kink skipped)");
}

// The GPT end to end: embedding, two blocks, ln_f and the tied head, one label per token
// (the mean over every position's loss).
TEST(NetworkGradient, GptWithATiedHeadThroughEveryPositionsLoss) {
  kernels::setBlasThreads(1);
  const GptShape shape{11, 4, 6, 2, 2, 0.f};
  Network model = makeGpt(shape, 5);
  const int batch = 2, rows = batch * shape.context;
  std::mt19937 rng(31);
  std::vector<float> tokens;
  std::vector<uint8_t> labels;
  for (int i = 0; i < rows; ++i) {
    tokens.push_back(static_cast<float>(rng() % shape.vocab));
    labels.push_back(static_cast<uint8_t>(rng() % shape.vocab));
  }
  ASSERT_EQ(model.positions(), shape.context);
  ASSERT_EQ(model.classes(), shape.vocab);
  auto loss = [&] { return model.forward(tokens.data(), labels.data(), batch).loss_sum / rows; };
  loss();
  model.zeroGrads();
  model.backward(tokens.data(), labels.data(), batch);
  const std::vector<float> analytic(model.grads(), model.grads() + model.parameterCount());
  DiffCheck check;
  for (size_t i = 0; i < model.parameterCount(); ++i)
    check.expect(analytic[i], centralDifference(model.params()[i], kNetworkEps, loss),
                 model.describe().substr(0, 0) + "parameter " + std::to_string(i));
  check.report("gpt vocab 11, context 4, width 6, 2 heads, 2 blocks");
}

TEST(NetworkGradient, MlpWithDropoutThroughSoftmaxCrossEntropy) {
  Network model = makeMlp({1, 1, 6}, {5, 4}, 3, 0.25f, 7);
  checkNetwork(model, 5, 11, "mlp 6-5-4-3");
}

TEST(NetworkGradient, CnnConvPoolConvPoolFc) {
  Network model = makeCnn({8, 8, 2}, {3, 4}, 3, {5}, 4, 0.f, 3);
  checkNetwork(model, 3, 20, "cnn 8x8x2 [3, 4] k3 fc 5");
}

}  // namespace
}  // namespace ranklab
