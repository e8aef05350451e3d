// bf16 and fp16 storage formats and casts to and from fp32. Both are 16-bit patterns held
// in uint16_t; arithmetic is always done in fp32. Casts round to nearest even, keep
// inf and NaN (a NaN stays a NaN), and turn fp32 values beyond fp16's range into inf;
// bf16 casts flush fp32 subnormals to zero (as the AVX-512 BF16 instruction does).
// The vector paths use AVX-512 BF16 / F16C when the CPU has them, else portable code with
// the same results bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ranklab::kernels {

using bf16_t = uint16_t;
using fp16_t = uint16_t;

inline float bf16ToFloat(bf16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline bf16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  // A NaN must not round into inf: keep it quiet and non-zero.
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<bf16_t>((bits >> 16) | 0x40u);
  // fp32 subnormals (< 1.2e-38) become signed zero, as AVX-512 BF16's conversion does.
  if ((bits & 0x7f800000u) == 0) return static_cast<bf16_t>((bits >> 16) & 0x8000u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<bf16_t>(bits >> 16);
}

float fp16ToFloat(fp16_t h);
fp16_t floatToFp16(float f);

// Largest finite fp16 value; gradients above it overflow to inf in fp16.
inline constexpr float kFp16Max = 65504.f;

void floatToBf16(const float* in, bf16_t* out, size_t n);
void bf16ToFloat(const bf16_t* in, float* out, size_t n);
void floatToFp16(const float* in, fp16_t* out, size_t n);
void fp16ToFloat(const fp16_t* in, float* out, size_t n);

// x[i] = float(low(x[i])): rounds fp32 values in place to what bf16 / fp16 can hold.
void roundToBf16(float* x, size_t n);
void roundToFp16(float* x, size_t n);

// x *= factor in place; false when any result is inf or NaN. One pass: AMP's unscale and
// overflow check together.
bool scaleAndCheckFinite(float* x, size_t n, float factor);

// Which vector paths this CPU takes (for logs and benchmarks).
bool cpuHasAvx512Bf16();
bool cpuHasF16c();

}  // namespace ranklab::kernels
