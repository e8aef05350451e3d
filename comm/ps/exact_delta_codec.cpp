#include "comm/ps/exact_delta_codec.h"

#include "comm/codecs/sparse_payload.h"

namespace ranklab {

void ExactDeltaCodec::encode(const float* x, size_t n, std::vector<uint8_t>& out) {
  indices_.clear();
  values_.clear();
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != 0.f) {
      indices_.push_back(static_cast<uint32_t>(i));
      values_.push_back(x[i]);
    }
  }
  sparse::encode(indices_.data(), values_.data(), indices_.size(), n, sparse::ValueType::kF32, out);
}

void ExactDeltaCodec::decode(const uint8_t* payload, size_t bytes, size_t n, float* out,
                             DecodeMode mode) {
  sparse::decode(payload, bytes, n, out, mode, "exact-delta");
}

}  // namespace ranklab
