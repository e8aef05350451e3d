#include "comm/codecs/sign_codec.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "comm/codecs/wire_format.h"

namespace ranklab {

SignCodec::SignCodec(int bucket) : bucket_(static_cast<size_t>(bucket)) {
  if (bucket < 1) throw std::invalid_argument("sign: bucket must be >= 1");
}

size_t SignCodec::payloadBytes(size_t n) const {
  return buckets(n) * sizeof(float) + (n + 7) / 8;
}

void SignCodec::encode(const float* x, size_t n, std::vector<uint8_t>& out) {
  out.assign(payloadBytes(n), 0);
  uint8_t* bits = out.data() + buckets(n) * sizeof(float);
  for (size_t b = 0; b < buckets(n); ++b) {
    const size_t begin = b * bucket_, end = std::min(n, begin + bucket_);
    // Four partial sums: not one long chain of dependent additions.
    double part[4] = {};
    size_t i = begin;
    for (; i + 4 <= end; i += 4) {
      for (int j = 0; j < 4; ++j) part[j] += std::fabs(x[i + j]);
    }
    for (; i < end; ++i) part[0] += std::fabs(x[i]);
    const double sum = (part[0] + part[1]) + (part[2] + part[3]);
    const auto scale = static_cast<float>(sum / static_cast<double>(end - begin));
    std::memcpy(out.data() + b * sizeof(float), &scale, sizeof scale);
  }
  for (size_t i = 0; i < n; ++i) bits[i / 8] |= static_cast<uint8_t>((x[i] < 0.f) << (i % 8));
}

void SignCodec::decode(const uint8_t* payload, size_t bytes, size_t n, float* out,
                       DecodeMode mode) {
  if (bytes != payloadBytes(n)) {
    wire::badPayload("sign", std::to_string(bytes) + " bytes for " + std::to_string(n) +
                                 " elements, expected " + std::to_string(payloadBytes(n)));
  }
  const uint8_t* bits = payload + buckets(n) * sizeof(float);
  for (size_t b = 0; b < buckets(n); ++b) {
    float scale;
    std::memcpy(&scale, payload + b * sizeof(float), sizeof scale);
    const size_t begin = b * bucket_, end = std::min(n, begin + bucket_);
    // Branch-free: the signs are as good as random to a branch predictor.
    const float signed_scale[2] = {scale, -scale};
    if (mode == DecodeMode::kAdd) {
      for (size_t i = begin; i < end; ++i) out[i] += signed_scale[bits[i / 8] >> (i % 8) & 1u];
    } else {
      for (size_t i = begin; i < end; ++i) out[i] = signed_scale[bits[i / 8] >> (i % 8) & 1u];
    }
  }
}

}  // namespace ranklab
