// Dynamic loss scaling: GradScaler's defaults, growth after exactly growth_interval clean
// steps, and backoff plus a skipped step whenever an overflow is injected.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "engine/amp/loss_scaler.h"
#include "kernels/cpu/low_precision.h"

namespace ranklab {
namespace {

TEST(LossScaler, GradScalerDefaults) {
  LossScaler scaler;
  EXPECT_EQ(scaler.scale(), 65536.f);
  for (int i = 0; i < 1999; ++i) ASSERT_TRUE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 65536.f) << "grew before 2000 clean steps";
  EXPECT_TRUE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 131072.f);
  EXPECT_EQ(scaler.cleanStepsInARow(), 0);
}

TEST(LossScaler, UnscaleDividesAndFindsInjectedInfAndNan) {
  LossScaler scaler({.init_scale = 4.f});
  for (float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    for (size_t where : {size_t{0}, size_t{15}, size_t{16}, size_t{36}}) {
      std::vector<float> g(37, 2.f);  // odd length: the vector path's masked tail
      EXPECT_TRUE(scaler.unscale(g.data(), g.size()));
      for (float v : g) ASSERT_EQ(v, 0.5f);
      g[where] = bad;
      EXPECT_FALSE(scaler.unscale(g.data(), g.size())) << bad << " at " << where;
    }
  }
}

TEST(LossScaler, OverflowSkipsHalvesAndRestartsTheCount) {
  LossScaler scaler({.init_scale = 1024.f, .growth_interval = 3});
  EXPECT_TRUE(scaler.update(false));
  EXPECT_TRUE(scaler.update(false));
  EXPECT_FALSE(scaler.update(true)) << "an overflow step must be skipped";
  EXPECT_EQ(scaler.scale(), 512.f);
  EXPECT_EQ(scaler.skippedSteps(), 1);
  // The two clean steps before the overflow no longer count.
  EXPECT_TRUE(scaler.update(false));
  EXPECT_TRUE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 512.f);
  EXPECT_TRUE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 1024.f);
}

// An fp16 backward pass, simulated: gradients are scaled, rounded to fp16 (where values
// above 65504 become inf), then unscaled. A true gradient of 3.0 overflows at 2^16 and
// 2^15 (3 * 32768 = 98304) and fits at 2^14: two skipped steps, then training goes on
// with exactly the fp32 gradient.
TEST(LossScaler, Fp16OverflowBacksOffUntilTheGradientFits) {
  LossScaler scaler;
  const std::vector<float> truth = {3.f, -1e-3f, 2e-7f, 0.f};
  int skipped = 0;
  std::vector<float> g;
  for (int step = 0; step < 10; ++step) {
    g = truth;
    for (float& v : g) v *= scaler.scale();
    kernels::roundToFp16(g.data(), g.size());
    const bool finite = scaler.unscale(g.data(), g.size());
    if (!scaler.update(!finite)) {
      ++skipped;
      continue;
    }
    break;
  }
  EXPECT_EQ(skipped, 2);
  EXPECT_EQ(scaler.scale(), 16384.f);
  EXPECT_EQ(g[0], 3.f);
  // 2e-7 alone is below fp16's smallest subnormal (6e-8 rounds it coarsely); scaled it keeps
  // about 3 significant digits.
  EXPECT_NEAR(g[2], 2e-7f, 2e-7f * 1e-3f);
  std::vector<float> unscaled = truth;
  kernels::roundToFp16(unscaled.data(), unscaled.size());
  EXPECT_GT(std::fabs(unscaled[2] - 2e-7f), 1e-8f) << "without scaling fp16 loses it";
}

}  // namespace
}  // namespace ranklab
