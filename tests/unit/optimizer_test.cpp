// Optimizers against PyTorch 1.13's update rules worked by hand, their state round trip,
// and the learning-rate schedules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/optim/lr_schedule.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/sharded_optimizer.h"
#include "kernels/cpu/optimizer_update.h"

namespace ranklab {
namespace {

TEST(Sgd, FollowsPyTorchMomentumRule) {
  // v1 = g1 + wd p0; p1 = p0 - lr v1; v2 = m v1 + g2 + wd p1; p2 = p1 - lr v2.
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

TEST(Sgd, NesterovLooksAhead) {
  // g = grad + wd p; v = m v + g; p -= lr (g + m v)
  Sgd sgd(1, 0.9, 0.0, /*nesterov=*/true);
  float p = 1.f;
  const float g1 = 0.5f, g2 = 0.25f;
  sgd.step(&p, &g1, 0.1);
  const float v1 = 0.5f, p1 = 1.f - 0.1f * (0.5f + 0.9f * v1);
  EXPECT_FLOAT_EQ(p, p1);
  sgd.step(&p, &g2, 0.1);
  const float v2 = 0.9f * v1 + 0.25f;
  EXPECT_FLOAT_EQ(p, p1 - 0.1f * (0.25f + 0.9f * v2));
}

double adamByHand(bool decoupled, int steps, const std::vector<double>& grads) {
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.1;
  double p = 1.0, m = 0, v = 0;
  for (int t = 1; t <= steps; ++t) {
    if (decoupled) p *= 1 - lr * wd;
    const double g = grads[t - 1] + (decoupled ? 0.0 : wd * p);
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g * g;
    const double denom = std::sqrt(v) / std::sqrt(1 - std::pow(b2, t)) + eps;
    p -= lr / (1 - std::pow(b1, t)) * m / denom;
  }
  return p;
}

// kernels::sgdUpdate walks a large buffer block by block from its end: every element is
// updated once and rounded as in one pass, and an update split into chunks on cache lines
// (as shm-sharded ranks do) gives the same bits as the whole.
TEST(Sgd, UpdateInBlocksEqualsChunksOnCacheLines) {
  const size_t n = 40000 + 10;  // two full blocks of 2^14, a third one and a ragged tail
  std::vector<float> params(n), grads(n), velocity(n);
  for (size_t i = 0; i < n; ++i) {
    params[i] = std::sin(0.37f * i);
    grads[i] = std::cos(0.11f * i);
    velocity[i] = 0.001f * static_cast<float>(i % 97);
  }
  auto chunked_params = params, chunked_velocity = velocity;
  kernels::sgdUpdate(params.data(), grads.data(), velocity.data(), n, 0.05f, 0.9f, 0.01f, false);
  for (size_t begin = 0, chunk = 16 * 443; begin < n; begin += chunk, chunk += 16 * 1001) {
    const size_t count = std::min(chunk, n - begin);
    kernels::sgdUpdate(&chunked_params[begin], &grads[begin], &chunked_velocity[begin], count,
                       0.05f, 0.9f, 0.01f, false);
  }
  EXPECT_EQ(params, chunked_params);
  EXPECT_EQ(velocity, chunked_velocity);
}

TEST(Adam, AdamAndAdamWFollowPyTorch) {
  const std::vector<double> grads = {0.5, -0.2, 0.3};
  for (bool decoupled : {false, true}) {
    Adam adam(1, 0.9, 0.999, 1e-8, 0.1, decoupled);
    EXPECT_EQ(adam.kind(), decoupled ? "adamw" : "adam");
    float p = 1.f;
    for (double g : grads) {
      const float gf = static_cast<float>(g);
      adam.step(&p, &gf, 0.01);
    }
    EXPECT_NEAR(p, adamByHand(decoupled, 3, grads), 1e-6) << adam.kind();
  }
}

TEST(Optimizers, StateRoundTripContinuesIdentically) {
  TrainSpec spec;
  for (const char* kind : {"sgd", "adam", "adamw"}) {
    spec.optimizer = choiceFrom<OptimizerKind>(kind);
    auto a = makeOptimizer(spec, 3), b = makeOptimizer(spec, 3);
    std::vector<float> pa = {1.f, -2.f, 0.5f};
    const std::vector<float> g = {0.1f, 0.2f, -0.3f};
    a->step(pa.data(), g.data(), 0.01);
    std::vector<float> pb = pa;
    b->restore(a->state());
    a->step(pa.data(), g.data(), 0.01);
    b->step(pb.data(), g.data(), 0.01);
    EXPECT_EQ(pa, pb) << kind;
    OptimizerState wrong = a->state();
    wrong.tensors[0].second.resize(2);
    EXPECT_THROW(b->restore(wrong), std::invalid_argument) << kind;
  }
}

// ZeRO's shard: an Adam over [3, 7) of 10 parameters updates that slice exactly as a whole
// Adam does, holds the state of 4 parameters, and its state round-trips through whole tensors.
TEST(ShardedOptimizer, UpdatesItsSliceAsTheWholeOptimizerDoes) {
  TrainSpec train;
  train.optimizer = OptimizerKind::kAdamW;
  train.weight_decay = 0.1;
  const ParamRange own{3, 7};
  ShardedOptimizer shard(makeOptimizer(train, 4), 10, own);
  auto whole = makeOptimizer(train, 10);
  std::vector<float> a(10), b(10), grads(10);
  for (int i = 0; i < 10; ++i) a[i] = b[i] = 0.1f * static_cast<float>(i) - 0.3f;
  for (int step = 0; step < 3; ++step) {
    for (int i = 0; i < 10; ++i) grads[i] = std::sin(static_cast<float>(i * (step + 1)));
    whole->step(a.data(), grads.data(), 0.01);
    shard.stepRange(b.data(), grads.data(), 0.01, own);
  }
  for (size_t i = 0; i < 10; ++i) {
    if (i >= own.begin && i < own.end) {
      EXPECT_EQ(b[i], a[i]) << i;
    } else {
      EXPECT_EQ(b[i], 0.1f * static_cast<float>(i) - 0.3f) << "outside the shard " << i;
    }
  }
  EXPECT_EQ(shard.stateBytes(), 2 * 4 * sizeof(float));
  EXPECT_EQ(whole->stateBytes(), 2 * 10 * sizeof(float));
  const OptimizerState state = shard.state();
  ASSERT_EQ(state.tensors.size(), 2u);
  EXPECT_EQ(state.tensors[0].second.size(), 10u);
  EXPECT_EQ(state.tensors[0].second[0], 0.f);
  ShardedOptimizer again(makeOptimizer(train, 4), 10, own);
  again.restore(whole->state());
  EXPECT_EQ(again.state().tensors[0].second[4], whole->state().tensors[0].second[4]);
  EXPECT_THROW(shard.stepRange(b.data(), grads.data(), 0.01, {0, 10}), std::invalid_argument);
  EXPECT_THROW(ShardedOptimizer(makeOptimizer(train, 5), 10, own), std::invalid_argument);
}

TEST(LrSchedule, ConstantStepCosineAndWarmUp) {
  TrainSpec spec;
  spec.lr = 0.1;
  const LrSchedule constant(spec, 10, 100);
  EXPECT_DOUBLE_EQ(constant.at(1), 0.1);
  EXPECT_DOUBLE_EQ(constant.at(100), 0.1);

  spec.lr_schedule = LrScheduleKind::kStep;
  spec.lr_step_epochs = 2;
  spec.lr_gamma = 0.5;
  const LrSchedule step(spec, 10, 100);  // 10 steps per epoch: halve every 20 steps
  EXPECT_DOUBLE_EQ(step.at(20), 0.1);
  EXPECT_DOUBLE_EQ(step.at(21), 0.05);
  EXPECT_DOUBLE_EQ(step.at(41), 0.025);

  spec.lr_schedule = LrScheduleKind::kCosine;
  spec.lr_min = 0.01;
  spec.warmup_steps = 10;
  const LrSchedule cosine(spec, 10, 110);
  EXPECT_DOUBLE_EQ(cosine.at(1), 0.01);      // warm-up: lr * 1/10
  EXPECT_DOUBLE_EQ(cosine.at(10), 0.1);      // warm-up ends at the full rate
  EXPECT_NEAR(cosine.at(60), 0.055, 1e-12);  // halfway down
  EXPECT_DOUBLE_EQ(cosine.at(110), 0.01);    // the last step reaches lr_min
  for (int64_t s = 11; s < 110; ++s) EXPECT_GT(cosine.at(s), cosine.at(s + 1)) << s;
}

}  // namespace
}  // namespace ranklab
