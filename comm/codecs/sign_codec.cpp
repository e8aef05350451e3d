#include "comm/codecs/sign_codec.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "comm/codecs/wire_format.h"
#include "kernels/cpu/sign_pack.h"

namespace ranklab {

SignCodec::SignCodec(int bucket) : bucket_(static_cast<size_t>(bucket)) {
  if (bucket < 1) throw std::invalid_argument("sign: bucket must be >= 1");
}

size_t SignCodec::payloadBytes(size_t n) const {
  return kernels::signPayloadBytes(n, bucket_);
}

void SignCodec::encode(const float* x, size_t n, std::vector<uint8_t>& out) {
  out.resize(payloadBytes(n));
  kernels::signEncode(x, n, bucket_, out.data());
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
