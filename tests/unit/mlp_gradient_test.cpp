// Gradients of the MLP against central finite differences, in double-checked float.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "engine/model/mlp.h"
#include "engine/optim/sgd.h"

namespace ranklab {
namespace {

struct Batch {
  std::vector<float> x;
  std::vector<uint8_t> y;
};

Batch randomBatch(int batch, int inputs, int classes, uint64_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  Batch b;
  b.x.resize(static_cast<size_t>(batch) * inputs);
  for (auto& v : b.x) v = normal(rng);
  for (int i = 0; i < batch; ++i) b.y.push_back(static_cast<uint8_t>(rng() % classes));
  return b;
}

double meanLoss(Mlp& model, const Batch& b, int batch) {
  return model.forward(b.x.data(), b.y.data(), batch).loss_sum / batch;
}

// Every parameter of a small MLP: |analytic - numeric| <= 2e-3 * max(1, |numeric|).
TEST(MlpGradient, MatchesFiniteDifferences) {
  const int batch = 5;
  Mlp model({6, 5, 4, 3}, 7);
  const Batch b = randomBatch(batch, 6, 3, 11);
  model.forward(b.x.data(), b.y.data(), batch);
  model.zeroGrads();
  model.backward(b.x.data(), b.y.data(), batch);
  const std::vector<float> analytic(model.grads(), model.grads() + model.parameterCount());

  const float eps = 1e-2f;
  double worst = 0;
  for (size_t i = 0; i < model.parameterCount(); ++i) {
    const float saved = model.params()[i];
    model.params()[i] = saved + eps;
    const double up = meanLoss(model, b, batch);
    model.params()[i] = saved - eps;
    const double down = meanLoss(model, b, batch);
    model.params()[i] = saved;
    const double numeric = (up - down) / (2 * eps);
    const double diff = std::abs(numeric - analytic[i]);
    worst = std::max(worst, diff);
    EXPECT_LE(diff, 2e-3 * std::max(1.0, std::abs(numeric))) << "parameter " << i;
  }
  std::printf("largest |analytic - finite difference| = %.3g over %zu parameters\n", worst,
              model.parameterCount());
}

TEST(MlpGradient, BackwardAddsIntoGradients) {
  Mlp model({4, 3, 2}, 3);
  const Batch b = randomBatch(2, 4, 2, 5);
  model.forward(b.x.data(), b.y.data(), 2);
  model.zeroGrads();
  model.backward(b.x.data(), b.y.data(), 2);
  const std::vector<float> once(model.grads(), model.grads() + model.parameterCount());
  model.backward(b.x.data(), b.y.data(), 2);
  for (size_t i = 0; i < once.size(); ++i) EXPECT_FLOAT_EQ(model.grads()[i], 2 * once[i]);
}

TEST(MlpLayout, NamedViewsCoverTheFlatBuffer) {
  Mlp model({784, 256, 128, 10}, 1);
  EXPECT_EQ(model.parameterCount(), 784u * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
  size_t next = 0;
  for (const auto& view : model.views()) {
    EXPECT_EQ(view.offset, next) << view.name;
    next += view.size;
  }
  EXPECT_EQ(next, model.parameterCount());
  EXPECT_EQ(model.views().front().name, "fc0.weight");
}

TEST(MlpInit, SameSeedSameModelAndPyTorchBounds) {
  Mlp a({784, 256, 10}, 42), b({784, 256, 10}, 42), c({784, 256, 10}, 43);
  EXPECT_EQ(0, std::memcmp(a.params(), b.params(), a.parameterCount() * sizeof(float)));
  EXPECT_NE(0, std::memcmp(a.params(), c.params(), a.parameterCount() * sizeof(float)));
  const float bound = 1.f / std::sqrt(784.f);
  for (size_t i = 0; i < 784u * 256; ++i) ASSERT_LE(std::abs(a.params()[i]), bound);
}

TEST(Sgd, FollowsPyTorchMomentumRule) {
  // Two steps by hand: v1 = g1 + wd p0; p1 = p0 - lr v1; v2 = m v1 + g2 + wd p1; p2 = p1 - lr v2.
  Sgd sgd(1, 0.9, 0.1);
  float p = 1.f;
  const float g1 = 0.5f, g2 = -0.25f;
  sgd.step(&p, &g1, 0.1);
  const float v1 = 0.5f + 0.1f * 1.f, p1 = 1.f - 0.1f * v1;
  EXPECT_FLOAT_EQ(p, p1);
  sgd.step(&p, &g2, 0.1);
  const float v2 = 0.9f * v1 + (-0.25f + 0.1f * p1);
  EXPECT_FLOAT_EQ(p, p1 - 0.1f * v2);
}

}  // namespace
}  // namespace ranklab
