#include "comm/codecs/qsgd_codec.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "comm/codecs/wire_format.h"

namespace ranklab {

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
}  // namespace

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
    const float scale = maxMagnitude(x + begin, end - begin);
    wire::append(out, scale);
    const float inv = scale > 0.f ? s / scale : 0.f;
    // Branch-free: random signs and coin flips would defeat the branch predictor. Each
    // random draw gives four 16-bit uniforms (a rounding bias below 2^-16 of a level).
    uint64_t random = 0;
    for (size_t i = begin; i < end; ++i) {
      if ((i - begin) % 4 == 0) random = nearest_ ? 0x8000800080008000ull : rng_.next();
      const float u = static_cast<float>(random & 0xffffu) * 0x1.0p-16f;  // 0.5: nearest
      random >>= 16;
      const float a = std::min(std::fabs(x[i]) * inv, s);  // in [0, s]
      const auto floor = static_cast<uint32_t>(a);         // a >= 0: truncation is floor
      const uint32_t up = u < a - static_cast<float>(floor);
      codes_[i] = (static_cast<uint32_t>(std::signbit(x[i])) * sign_bit) | (floor + up);
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
  // code -> +-level / s, one table lookup per element instead of branches on the sign.
  const uint32_t sign_bit = 1u << (bits_ - 1);
  float unit[256];
  for (uint32_t code = 0; code < (1u << bits_); ++code) {
    const float level = static_cast<float>(code & (sign_bit - 1)) / static_cast<float>(levels_);
    unit[code] = code & sign_bit ? -level : level;
  }
  for (size_t b = 0; b < buckets(n); ++b) {
    float scale;
    std::memcpy(&scale, payload + b * sizeof(float), sizeof scale);
    const size_t begin = b * bucket_, end = std::min(n, begin + bucket_);
    if (mode == DecodeMode::kAdd) {
      for (size_t i = begin; i < end; ++i) out[i] += unit[codes_[i]] * scale;
    } else {
      for (size_t i = begin; i < end; ++i) out[i] = unit[codes_[i]] * scale;
    }
  }
}

}  // namespace ranklab
