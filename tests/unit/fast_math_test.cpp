// The vectorizable exp and erf (kernels/cpu/fast_math.h) against the C library's over their
// whole useful range, and the GELU built on them against the exact one, in every instruction
// set's build (the per-ISA runs of this binary).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/cpu/fast_math.h"
#include "kernels/cpu/transformer.h"

namespace ranklab::kernels {
namespace {

TEST(FastMath, ExpIsWithinFourUlpOfTheLibrarysOverItsRange) {
  double worst = 0;
  for (float x = -87.f; x <= 88.f; x += 0.00137f) {
    const double want = std::exp(double(x));
    worst = std::max(worst, std::abs(double(expApprox(x)) - want) / want);
  }
  std::printf("exp: largest relative error %.3g (a float's ulp is %.3g)\n", worst, 0x1p-23);
  EXPECT_LT(worst, 4 * 0x1p-24);
  EXPECT_LT(expApprox(-200.f), 1.3e-38f);  // clamped: a softmax's far tail
  EXPECT_EQ(expApprox(0.f), 1.f);
}

TEST(FastMath, ErfIsWithinTwoTenMillionthsOfTheLibrarys) {
  double worst = 0;
  for (float x = -6.f; x <= 6.f; x += 0.0001f)
    worst = std::max(worst, std::abs(double(erfApprox(x)) - std::erf(double(x))));
  std::printf("erf: largest absolute error %.3g\n", worst);
  EXPECT_LT(worst, 2e-7);
  EXPECT_EQ(erfApprox(0.f), 0.f);
  EXPECT_EQ(erfApprox(-1.f), -erfApprox(1.f));  // odd
}

// The GELU and its slope against the exact erf form: what a GPT's MLP computes.
TEST(FastMath, GeluAndItsSlopeFollowTheExactForm) {
  std::vector<float> x;
  for (float v = -8.f; v <= 8.f; v += 0.001f) x.push_back(v);
  std::vector<float> y(x.size()), slope(x.size()), y_only(x.size());
  geluForward(x.data(), y.data(), slope.data(), x.size());
  geluForward(x.data(), y_only.data(), nullptr, x.size());
  double worst_y = 0, worst_slope = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i], cdf = 0.5 * (1 + std::erf(v / std::sqrt(2.0)));
    const double dcdf = std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
    worst_y = std::max(worst_y, std::abs(y[i] - v * cdf));
    worst_slope = std::max(worst_slope, std::abs(slope[i] - (cdf + v * dcdf)));
    // Evaluation's loop (no slope) agrees with training's to an ulp or two (the compiler
    // contracts the two loops' products into FMAs its own way).
    EXPECT_NEAR(y[i], y_only[i], 2.5e-7 * std::max(1.f, std::abs(y[i])));
  }
  std::printf("gelu: largest absolute error %.3g, its slope's %.3g\n", worst_y, worst_slope);
  EXPECT_LT(worst_y, 2e-6);
  EXPECT_LT(worst_slope, 2e-6);
}

}  // namespace
}  // namespace ranklab::kernels
