#include "comm/codecs/qsgd_codec.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "comm/codecs/wire_format.h"

namespace ranklab {

QsgdCodec::QsgdCodec(int bits, int bucket, uint64_t seed)
    : bits_(bits),
      bucket_(static_cast<size_t>(bucket)),
      levels_((1 << (bits - 1)) - 1),
      rng_(seed) {
  if (bits < 2 || bits > 8) {
    throw std::invalid_argument("qsgd: bits must be 2..8, got " + std::to_string(bits));
  }
  if (bucket < 1) throw std::invalid_argument("qsgd: bucket must be >= 1");
}

size_t QsgdCodec::payloadBytes(size_t n) const {
  return buckets(n) * sizeof(float) + wire::packedBytes(n, bits_);
}

void QsgdCodec::encode(const float* x, size_t n, std::vector<uint8_t>& out) {
  out.clear();
  out.reserve(payloadBytes(n));
  codes_.resize(n);
  const uint32_t sign_bit = 1u << (bits_ - 1);
  const auto s = static_cast<float>(levels_);
  for (size_t b = 0; b < buckets(n); ++b) {
    const size_t begin = b * bucket_, end = std::min(n, begin + bucket_);
    float scale = 0.f;
    for (size_t i = begin; i < end; ++i) scale = std::max(scale, std::fabs(x[i]));
    wire::append(out, scale);
    const float inv = scale > 0.f ? s / scale : 0.f;
    for (size_t i = begin; i < end; ++i) {
      const float a = std::fabs(x[i]) * inv;  // in [0, s]
      float level = std::floor(a);
      if (rng_.uniform() < a - level) level += 1.f;
      const auto l = static_cast<uint32_t>(std::min(level, s));
      codes_[i] = (x[i] < 0.f ? sign_bit : 0u) | l;
    }
  }
  wire::packBits(codes_.data(), n, bits_, out);
}

void QsgdCodec::decode(const uint8_t* payload, size_t bytes, size_t n, float* out,
                       DecodeMode mode) {
  if (bytes != payloadBytes(n)) {
    wire::badPayload("qsgd", std::to_string(bytes) + " bytes for " + std::to_string(n) +
                                 " elements, expected " + std::to_string(payloadBytes(n)));
  }
  codes_.resize(n);
  const size_t scale_bytes = buckets(n) * sizeof(float);
  wire::unpackBits(payload + scale_bytes, n, bits_, codes_.data());
  const uint32_t sign_bit = 1u << (bits_ - 1);
  for (size_t b = 0; b < buckets(n); ++b) {
    float scale;
    std::memcpy(&scale, payload + b * sizeof(float), sizeof scale);
    const float step = scale / static_cast<float>(levels_);
    const size_t begin = b * bucket_, end = std::min(n, begin + bucket_);
    for (size_t i = begin; i < end; ++i) {
      const uint32_t code = codes_[i];
      const float magnitude = static_cast<float>(code & (sign_bit - 1)) * step;
      const float v = code & sign_bit ? -magnitude : magnitude;
      out[i] = mode == DecodeMode::kAdd ? out[i] + v : v;
    }
  }
}

}  // namespace ranklab
