#include "comm/codecs/half_float_codec.h"

#include <algorithm>
#include <string>

#include "comm/codecs/wire_format.h"

namespace ranklab {

void HalfFloatCodec::encode(const float* x, size_t n, std::vector<uint8_t>& out) {
  out.resize(payloadBytes(n));
  narrow_(x, reinterpret_cast<uint16_t*>(out.data()), n);
}

void HalfFloatCodec::decode(const uint8_t* payload, size_t bytes, size_t n, float* out,
                            DecodeMode mode) {
  if (bytes != payloadBytes(n)) {
    wire::badPayload(name().c_str(), std::to_string(bytes) + " bytes for " + std::to_string(n) +
                                         " elements, expected " + std::to_string(payloadBytes(n)));
  }
  const auto* halves = reinterpret_cast<const uint16_t*>(payload);
  if (mode == DecodeMode::kAssign) return widen_(halves, out, n);
  float block[512];
  for (size_t i = 0; i < n; i += 512) {
    const size_t m = std::min<size_t>(512, n - i);
    widen_(halves + i, block, m);
    for (size_t j = 0; j < m; ++j) out[i + j] += block[j];
  }
}

}  // namespace ranklab
