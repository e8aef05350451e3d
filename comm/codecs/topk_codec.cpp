#include "comm/codecs/topk_codec.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "comm/codecs/sparse_payload.h"

namespace ranklab {

TopkCodec::TopkCodec(double ratio) : ratio_(ratio) {
  if (!(ratio > 0 && ratio <= 1)) throw std::invalid_argument("topk: ratio must be in (0, 1]");
}

size_t TopkCodec::keptCount(size_t n) const {
  if (n == 0) return 0;
  const auto k = static_cast<size_t>(std::ceil(ratio_ * static_cast<double>(n)));
  return std::clamp<size_t>(k, 1, n);
}

void TopkCodec::encode(const float* x, size_t n, std::vector<uint8_t>& out) {
  const size_t k = keptCount(n);
  indices_.clear();
  values_.clear();
  if (k > 0) {
    // The k-th largest magnitude by selection on a copy, then one ordered scan: indices
    // come out sorted, which the payload needs.
    magnitudes_.resize(n);
    for (size_t i = 0; i < n; ++i) magnitudes_[i] = std::fabs(x[i]);
    std::nth_element(magnitudes_.begin(), magnitudes_.begin() + static_cast<ptrdiff_t>(k - 1),
                     magnitudes_.end(), std::greater<float>());
    const float kth = magnitudes_[k - 1];
    size_t above = 0;
    for (size_t i = 0; i < n; ++i) above += std::fabs(x[i]) > kth;
    size_t ties = k - above;
    for (size_t i = 0; i < n; ++i) {
      const float m = std::fabs(x[i]);
      if (m > kth || (m == kth && ties > 0)) {
        if (m == kth) --ties;
        indices_.push_back(static_cast<uint32_t>(i));
        values_.push_back(x[i]);
      }
    }
  }
  sparse::encode(indices_.data(), values_.data(), indices_.size(), n, out);
}

void TopkCodec::decode(const uint8_t* payload, size_t bytes, size_t n, float* out,
                       DecodeMode mode) {
  sparse::decode(payload, bytes, n, out, mode, "topk");
}

}  // namespace ranklab
