#include "comm/codecs/topk_codec.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "comm/codecs/sparse_payload.h"
#include "kernels/cpu/sparse_select.h"

namespace ranklab {

TopkCodec::TopkCodec(double ratio, bool half_values)
    : ratio_(ratio), values_type_(half_values ? sparse::ValueType::kF16 : sparse::ValueType::kF32) {
  if (!(ratio > 0 && ratio <= 1)) throw std::invalid_argument("topk: ratio must be in (0, 1]");
}

size_t topkKeptCount(double ratio, size_t n) {
  if (n == 0) return 0;
  const auto k = static_cast<size_t>(std::ceil(ratio * static_cast<double>(n)));
  return std::clamp<size_t>(k, 1, n);
}

size_t TopkCodec::keptCount(size_t n) const {
  return topkKeptCount(ratio_, n);
}

void TopkCodec::encode(const float* x, size_t n, std::vector<uint8_t>& out) {
  const size_t k = keptCount(n);
  kernels::selectTopk(x, n, k, indices_, values_, bucket_members_);
  sparse::encode(indices_.data(), values_.data(), indices_.size(), n, values_type_, out);
}

void TopkCodec::decode(const uint8_t* payload, size_t bytes, size_t n, float* out,
                       DecodeMode mode) {
  sparse::decode(payload, bytes, n, out, mode, "topk");
}

}  // namespace ranklab
