#include "comm/codecs/threshold_codec.h"

#include <cmath>
#include <stdexcept>

#include "comm/codecs/sparse_payload.h"
#include "kernels/cpu/sparse_select.h"

namespace ranklab {

ThresholdCodec::ThresholdCodec(double threshold, bool half_values)
    : threshold_(static_cast<float>(threshold)),
      values_type_(half_values ? sparse::ValueType::kF16 : sparse::ValueType::kF32) {
  if (!(threshold > 0)) throw std::invalid_argument("threshold: threshold must be > 0");
}

void ThresholdCodec::encode(const float* x, size_t n, std::vector<uint8_t>& out) {
  kernels::selectAtLeast(x, n, threshold_, indices_, values_);
  sparse::encode(indices_.data(), values_.data(), indices_.size(), n, values_type_, out);
}

void ThresholdCodec::decode(const uint8_t* payload, size_t bytes, size_t n, float* out,
                            DecodeMode mode) {
  sparse::decode(payload, bytes, n, out, mode, "threshold");
}

}  // namespace ranklab
