#include "kernels/cpu/qsgd_quantize.h"

#include <algorithm>
#include <cmath>

#include "kernels/splitmix.h"

namespace ranklab::kernels {

namespace {
// Largest |x|; eight independent maxima, so the loop is not one long dependency chain.
float maxMagnitude(const float* x, size_t n) {
  float m[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) m[j] = std::max(m[j], std::fabs(x[i + j]));
  }
  for (; i < n; ++i) m[0] = std::max(m[0], std::fabs(x[i]));
  return std::max({m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7]});
}

size_t drawsPerBucket(size_t bucket) {
  return (bucket + 3) / 4;
}
}  // namespace

uint64_t qsgdDraws(size_t n, size_t bucket) {
  const size_t whole = n / bucket, tail = n % bucket;
  return whole * drawsPerBucket(bucket) + (tail + 3) / 4;
}

void qsgdQuantize(const float* x, size_t n, int bits, size_t bucket, QsgdRounding rounding,
                  float* scales, uint32_t* codes) {
  const uint32_t sign_bit = 1u << (bits - 1);
  const auto s = static_cast<float>(sign_bit - 1);
  uint64_t state = rounding.stream;
  for (size_t b = 0, begin = 0; begin < n; ++b, begin += bucket) {
    const size_t end = std::min(n, begin + bucket);
    const float scale = maxMagnitude(x + begin, end - begin);
    scales[b] = scale;
    const float inv = scale > 0.f ? s / scale : 0.f;
    // Branch-free: random signs and coin flips would defeat the branch predictor.
    uint64_t random = 0;
    for (size_t i = begin; i < end; ++i) {
      if ((i - begin) % 4 == 0)
        random = rounding.nearest ? 0x8000800080008000ull : splitMix64(state += kSplitMixStep);
      const float u = static_cast<float>(random & 0xffffu) * 0x1.0p-16f;  // 0.5: nearest
      random >>= 16;
      const float a = std::min(std::fabs(x[i]) * inv, s);  // in [0, s]
      const auto floor = static_cast<uint32_t>(a);         // a >= 0: truncation is floor
      const uint32_t up = u < a - static_cast<float>(floor);
      codes[i] = (static_cast<uint32_t>(std::signbit(x[i])) * sign_bit) | (floor + up);
    }
  }
}

void qsgdLeftOver(const float* x, size_t n, int bits, size_t bucket, const float* scales,
                  const uint32_t* codes, float* residual) {
  for (size_t i = 0; i < n; ++i) residual[i] = x[i] - qsgdUnit(codes[i], bits) * scales[i / bucket];
}

}  // namespace ranklab::kernels
