#include "kernels/cpu/low_precision.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/cpu_isa.h"

namespace ranklab::kernels {

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Vector paths, compiled for their ISA and chosen at run time, so the binary still runs on
// CPUs without them. Tails use masked loads and stores.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void floatToBf16Avx512(
    const float* in, bf16_t* out, size_t n) {
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 mask = n - i >= 16 ? 0xffff : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(mask, in + i);
    const __m256i h = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v));
    _mm256_mask_storeu_epi16(out + i, mask, h);
  }
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) void bf16ToFloatAvx512(const bf16_t* in,
                                                                            float* out, size_t n) {
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 mask = n - i >= 16 ? 0xffff : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m256i h = _mm256_maskz_loadu_epi16(mask, in + i);
    // maskz forms: the plain ones read an undefined vector GCC 12 warns about.
    const __m512i w = _mm512_maskz_slli_epi32(mask, _mm512_maskz_cvtepu16_epi32(mask, h), 16);
    _mm512_mask_storeu_ps(out + i, mask, _mm512_castsi512_ps(w));
  }
}

__attribute__((target("avx,f16c"))) void floatToFp16F16c(const float* in, fp16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = _cvtss_sh(in[i], _MM_FROUND_TO_NEAREST_INT);
}

__attribute__((target("avx,f16c"))) void fp16ToFloatF16c(const fp16_t* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) out[i] = _cvtsh_ss(in[i]);
}

__attribute__((target("avx512f"))) bool scaleAndCheckFiniteAvx512(float* x, size_t n,
                                                                  float factor) {
  const __m512 f = _mm512_set1_ps(factor);
  const __m512i exponent = _mm512_set1_epi32(0x7f800000);
  __mmask16 bad = 0;
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 mask = n - i >= 16 ? 0xffff : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + i), f);
    _mm512_mask_storeu_ps(x + i, mask, v);
    // inf and NaN are the values whose exponent bits are all ones.
    const __m512i e = _mm512_and_si512(_mm512_castps_si512(v), exponent);
    bad |= _mm512_mask_cmpeq_epi32_mask(mask, e, exponent);
  }
  return bad == 0;
}

__attribute__((target("avx2"))) bool scaleAndCheckFiniteAvx2(float* x, size_t n, float factor) {
  const __m256 f = _mm256_set1_ps(factor);
  const __m256i exponent = _mm256_set1_epi32(0x7f800000);
  __m256i bad = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), f);
    _mm256_storeu_ps(x + i, v);
    const __m256i e = _mm256_and_si256(_mm256_castps_si256(v), exponent);
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(e, exponent));
  }
  bool finite = _mm256_testz_si256(bad, bad);
  for (; i < n; ++i) {
    x[i] *= factor;
    finite &= std::isfinite(x[i]);
  }
  return finite;
}

const bool kAvx512Bf16 = __builtin_cpu_supports("avx512bf16") &&
                         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
const bool kAvx512 = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
const bool kF16c = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");

}  // namespace

bool cpuHasAvx512Bf16() {
  return kAvx512Bf16;
}

bool cpuHasF16c() {
  return kF16c;
}

// Portable fp16 conversions (the FP16 library's branch-free method): fp32 arithmetic does
// the rounding to nearest even, including into the subnormal range.
float fp16ToFloat(fp16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  const float normalized = floatOf((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  const float denormalized = floatOf((two_w >> 17) | (126u << 23)) - 0.5f;
  const uint32_t result = sign | (two_w < (1u << 27) ? bitsOf(denormalized) : bitsOf(normalized));
  return floatOf(result);
}

fp16_t floatToFp16(float f) {
  float base = (std::fabs(f) * 0x1.0p+112f) * 0x1.0p-110f;
  const uint32_t w = bitsOf(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = floatOf((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = bitsOf(base);
  const uint32_t nonsign = ((bits >> 13) & 0x00007C00u) + (bits & 0x00000FFFu);
  return static_cast<fp16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

void floatToBf16(const float* in, bf16_t* out, size_t n) {
  if (kAvx512Bf16) return floatToBf16Avx512(in, out, n);
  for (size_t i = 0; i < n; ++i) out[i] = floatToBf16(in[i]);
}

void bf16ToFloat(const bf16_t* in, float* out, size_t n) {
  if (kAvx512) return bf16ToFloatAvx512(in, out, n);
  for (size_t i = 0; i < n; ++i) out[i] = bf16ToFloat(in[i]);
}

void floatToFp16(const float* in, fp16_t* out, size_t n) {
  if (kF16c) return floatToFp16F16c(in, out, n);
  for (size_t i = 0; i < n; ++i) out[i] = floatToFp16(in[i]);
}

void fp16ToFloat(const fp16_t* in, float* out, size_t n) {
  if (kF16c) return fp16ToFloatF16c(in, out, n);
  for (size_t i = 0; i < n; ++i) out[i] = fp16ToFloat(in[i]);
}

bool scaleAndCheckFinite(float* x, size_t n, float factor) {
  // The same products on every path; RANKLAB_CPU_ISA picks which one runs.
  if (activeIsa() == Isa::kAvx512) return scaleAndCheckFiniteAvx512(x, n, factor);
  if (activeIsa() == Isa::kAvx2) return scaleAndCheckFiniteAvx2(x, n, factor);
  bool finite = true;
  for (size_t i = 0; i < n; ++i) {
    x[i] *= factor;
    finite &= std::isfinite(x[i]);
  }
  return finite;
}

void roundToBf16(float* x, size_t n) {
  bf16_t block[256];
  for (size_t i = 0; i < n; i += 256) {
    const size_t m = std::min<size_t>(256, n - i);
    floatToBf16(x + i, block, m);
    bf16ToFloat(block, x + i, m);
  }
}

void roundToFp16(float* x, size_t n) {
  fp16_t block[256];
  for (size_t i = 0; i < n; i += 256) {
    const size_t m = std::min<size_t>(256, n - i);
    floatToFp16(x + i, block, m);
    fp16ToFloat(block, x + i, m);
  }
}

}  // namespace ranklab::kernels
