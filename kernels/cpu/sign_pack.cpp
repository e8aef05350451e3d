#include "kernels/cpu/sign_pack.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ranklab::kernels {

namespace {
size_t bucketsOf(size_t n, size_t bucket) {
  return (n + bucket - 1) / bucket;
}

float scaleOf(const uint8_t* payload, size_t b) {
  float scale;
  std::memcpy(&scale, payload + b * sizeof(float), sizeof scale);
  return scale;
}
}  // namespace

size_t signPayloadBytes(size_t n, size_t bucket) {
  return bucketsOf(n, bucket) * sizeof(float) + (n + 7) / 8;
}

void signEncode(const float* x, size_t n, size_t bucket, uint8_t* payload) {
  if (n == 0) return;  // an empty payload: no bytes (and maybe no pointer) to write
  const size_t buckets = bucketsOf(n, bucket);
  for (size_t b = 0; b < buckets; ++b) {
    const size_t begin = b * bucket, end = std::min(n, begin + bucket);
    // Four partial sums: not one long chain of dependent additions.
    double part[4] = {};
    size_t i = begin;
    for (; i + 4 <= end; i += 4) {
      for (int j = 0; j < 4; ++j) part[j] += std::fabs(x[i + j]);
    }
    for (; i < end; ++i) part[0] += std::fabs(x[i]);
    const double sum = (part[0] + part[1]) + (part[2] + part[3]);
    const auto scale = static_cast<float>(sum / static_cast<double>(end - begin));
    std::memcpy(payload + b * sizeof(float), &scale, sizeof scale);
  }
  uint8_t* bits = payload + buckets * sizeof(float);
  std::memset(bits, 0, (n + 7) / 8);
  for (size_t i = 0; i < n; ++i) bits[i / 8] |= static_cast<uint8_t>((x[i] < 0.f) << (i % 8));
}

void signLeftOver(const float* x, size_t n, size_t bucket, const uint8_t* payload,
                  float* residual) {
  const uint8_t* bits = payload + bucketsOf(n, bucket) * sizeof(float);
  for (size_t i = 0; i < n; ++i) {
    const float scale = scaleOf(payload, i / bucket);
    residual[i] = x[i] - (bits[i / 8] >> (i % 8) & 1u ? -scale : scale);
  }
}

}  // namespace ranklab::kernels
