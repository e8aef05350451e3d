// bf16 / fp16 casts: the vector paths (AVX-512 BF16, F16C) agree bit for bit with the
// portable scalar code, round to nearest even, and keep inf, NaN and fp16's overflow.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/low_precision.h"

namespace ranklab::kernels {
namespace {

std::vector<float> probeValues() {
  std::vector<float> v = {0.f,
                          -0.f,
                          1.f,
                          -1.f,
                          65504.f,
                          65519.f,
                          65520.f,
                          1e-8f,
                          6e-8f,
                          -3e-5f,
                          1e30f,
                          -1e-38f,
                          1.00390625f,
                          1.01171875f,
                          3.14159265f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::denorm_min()};
  std::mt19937 rng(1);
  for (int i = 0; i < 5000; ++i) {
    uint32_t bits = rng();
    if ((bits & 0x7f800000u) == 0x7f800000u) bits &= 0xbfffffffu;  // no NaNs here
    float f;
    std::memcpy(&f, &bits, sizeof f);
    v.push_back(f);
    v.push_back(std::ldexp(static_cast<float>(rng() % 100000) / 1000.f, int(rng() % 40) - 30));
  }
  return v;
}

TEST(LowPrecision, VectorBf16MatchesScalar) {
  const auto x = probeValues();  // odd length: exercises the masked tail
  std::vector<bf16_t> h(x.size());
  std::vector<float> back(x.size());
  floatToBf16(x.data(), h.data(), x.size());
  bf16ToFloat(h.data(), back.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(h[i], floatToBf16(x[i])) << "x = " << x[i] << " at " << i;
    ASSERT_EQ(back[i], bf16ToFloat(h[i]));
  }
  std::printf("bf16 vector path: %s\n", cpuHasAvx512Bf16() ? "AVX-512 BF16" : "portable");
}

TEST(LowPrecision, VectorFp16MatchesScalar) {
  const auto x = probeValues();
  std::vector<fp16_t> h(x.size());
  std::vector<float> back(x.size());
  floatToFp16(x.data(), h.data(), x.size());
  fp16ToFloat(h.data(), back.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(h[i], floatToFp16(x[i])) << "x = " << x[i] << " at " << i;
    ASSERT_EQ(back[i], fp16ToFloat(h[i]));
  }
  std::printf("fp16 vector path: %s\n", cpuHasF16c() ? "F16C" : "portable");
}

TEST(LowPrecision, RoundsToNearestEvenAndKeepsSpecials) {
  // 1 + 2^-8 lies halfway between bf16 neighbours 1 and 1 + 2^-7: ties go to even (1).
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.00390625f)), 1.f);
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.01171875f)), 1.015625f);  // 1 + 3*2^-8 -> 1 + 2^-6
  EXPECT_EQ(fp16ToFloat(floatToFp16(1.f + 0x1.0p-11f)), 1.f);
  EXPECT_EQ(fp16ToFloat(floatToFp16(65519.f)), 65504.f);
  EXPECT_TRUE(std::isinf(fp16ToFloat(floatToFp16(65520.f))));
  EXPECT_EQ(fp16ToFloat(floatToFp16(0x1.0p-24f)), 0x1.0p-24f);  // smallest subnormal
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(nan))));
  EXPECT_TRUE(std::isnan(fp16ToFloat(floatToFp16(nan))));
  float v[3] = {nan, 1e6f, 1.f};
  roundToFp16(v, 3);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_TRUE(std::isinf(v[1]));
  EXPECT_EQ(v[2], 1.f);
}

}  // namespace
// AMP's unscale (and powersgd's mean) on whichever instruction set runs (this test runs once per
// RANKLAB_CPU_ISA): the scalar products bit for bit, and false exactly when some value is then
// inf or NaN, wherever it sits (a vector's lanes, the tail), or overflows only once scaled.
TEST(LowPrecision, ScaleAndCheckFiniteIsTheScalarsAndFindsEveryNonFinite) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.f, 100.f);
  for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 100, 1001}) {
    std::vector<float> x(n);
    for (float& v : x) v = normal(rng);
    std::vector<float> want = x;
    for (float& v : want) v *= 0.375f;
    EXPECT_TRUE(scaleAndCheckFinite(x.data(), n, 0.375f)) << n;
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(x[i], want[i]) << n << " at " << i;
    for (size_t at : {size_t{0}, n / 2, n - 1}) {
      if (n == 0) break;
      for (float bad : {std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN(), 3e38f}) {
        std::vector<float> y(n, 1.f);
        y[at] = bad;
        EXPECT_FALSE(scaleAndCheckFinite(y.data(), n, 2.f)) << n << " at " << at << ": " << bad;
      }
    }
  }
}

}  // namespace ranklab::kernels
