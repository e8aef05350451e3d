// exp and erf as branch-free polynomials, so a loop of them vectorizes (the C library's are
// calls, one value at a time): a GELU's erf and exp and the attention's softmax were a fifth
// of a GPT's training step on the CPU. Accuracy: exp within 1 ulp over [-87, 88] (Cephes'
// expf polynomial), erf within 2e-7 absolute (its series near 0, Abramowitz and Stegun
// 7.1.26 beyond): below what fp32 training notices, and checked against the C library's in
// tests/unit/fast_math_test.cpp.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace ranklab::kernels {

// e^x for x in [-87.3, 88.7], clamped outside it (about 1e-38 below: a softmax subtracts
// its row's maximum first, a GELU's argument is -x^2/2).
[[gnu::always_inline]] inline float expApprox(float x) {
  x = std::clamp(x, -87.3f, 88.7f);
  // x = n ln 2 + r, |r| <= ln 2 / 2; ln 2 in two parts so r keeps its bits.
  const float n = std::nearbyint(x * 1.44269504088896341f);
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.f;
  // 2^n from the exponent bits.
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  return er * std::bit_cast<float>(bits);
}

// erf: below |x| = 1 its Maclaurin series to x^23 (there 1 - ... would cancel), above it
// 1 - (a1 t + ... + a5 t^5) e^(-x^2), t = 1 / (1 + p |x|); both computed, one kept, so the
// loop has no branch.
[[gnu::always_inline]] inline float erfApprox(float x) {
  const float ax = std::fabs(x), x2 = x * x;
  // Written out: a loop here would keep the caller's loop from vectorizing.
  float series = 9.4227590647e-11f;
  series = series * x2 + -1.2290555302e-09f;
  series = series * x2 + 1.4807192816e-08f;
  series = series * x2 + -1.6365844691e-07f;
  series = series * x2 + 1.6462114366e-06f;
  series = series * x2 + -1.4925650358e-05f;
  series = series * x2 + 1.2055332982e-04f;
  series = series * x2 + -8.5483270235e-04f;
  series = series * x2 + 5.2239776254e-03f;
  series = series * x2 + -2.6866170645e-02f;
  series = series * x2 + 1.1283791671e-01f;
  series = series * x2 + -3.7612638903e-01f;
  series = series * x2 + 1.1283791671e+00f;
  const float t = 1.f / (1.f + 0.3275911f * ax);
  float poly = 1.061405429f;
  poly = poly * t - 1.453152027f;
  poly = poly * t + 1.421413741f;
  poly = poly * t - 0.284496736f;
  poly = poly * t + 0.254829592f;
  const float tail = std::copysign(1.f - poly * t * expApprox(-x2), x);
  return ax < 1.f ? series * x : tail;
}

}  // namespace ranklab::kernels
