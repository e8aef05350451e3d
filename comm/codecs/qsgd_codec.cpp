#include "comm/codecs/qsgd_codec.h"

#include <algorithm>
#include <cstring>
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

void qsgdEncode(const float* x, size_t n, int bits, size_t bucket, kernels::QsgdRounding rounding,
                std::vector<float>& scales, std::vector<uint32_t>& codes,
                std::vector<uint8_t>& out) {
  scales.resize((n + bucket - 1) / bucket);
  codes.resize(n);
  kernels::qsgdQuantize(x, n, bits, bucket, rounding, scales.data(), codes.data());
  out.clear();
  out.reserve(scales.size() * sizeof(float) + wire::packedBytes(n, bits));
  for (float scale : scales) wire::append(out, scale);
  wire::packBits(codes.data(), n, bits, out);
}

void QsgdCodec::encode(const float* x, size_t n, std::vector<uint8_t>& out) {
  qsgdEncode(x, n, bits_, bucket_, rounding(n), scales_, codes_, out);
}

kernels::QsgdRounding QsgdCodec::rounding(size_t n) {
  if (nearest_) return {true, 0};
  const kernels::QsgdRounding stochastic{false, rng_.position()};
  rng_.skip(kernels::qsgdDraws(n, bucket_));
  return stochastic;
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
  float unit[256];
  for (uint32_t code = 0; code < (1u << bits_); ++code) unit[code] = kernels::qsgdUnit(code, bits_);
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
