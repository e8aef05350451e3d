#include "comm/codecs/topk_codec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "comm/codecs/sparse_payload.h"

namespace ranklab {

TopkCodec::TopkCodec(double ratio, bool half_values)
    : ratio_(ratio), values_type_(half_values ? sparse::ValueType::kF16 : sparse::ValueType::kF32) {
  if (!(ratio > 0 && ratio <= 1)) throw std::invalid_argument("topk: ratio must be in (0, 1]");
}

size_t TopkCodec::keptCount(size_t n) const {
  if (n == 0) return 0;
  const auto k = static_cast<size_t>(std::ceil(ratio_ * static_cast<double>(n)));
  return std::clamp<size_t>(k, 1, n);
}

namespace {

// Bits of |x|: for non-negative floats the unsigned order of the bits is the value order.
uint32_t magnitudeBits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u & 0x7fffffffu;
}

// The k-th largest of the magnitudes' bits, by radix selection: a histogram of the top 11
// bits (exponent and 3 mantissa bits) finds the bucket that holds it, and only that
// bucket's members are sorted. Two passes over x instead of a selection over all of it.
uint32_t kthLargestMagnitude(const float* x, size_t n, size_t k, std::vector<uint32_t>& scratch) {
  constexpr int kShift = 20;
  std::vector<uint32_t> histogram(1u << (31 - kShift), 0);
  for (size_t i = 0; i < n; ++i) ++histogram[magnitudeBits(x[i]) >> kShift];
  size_t above = 0;
  uint32_t bucket = static_cast<uint32_t>(histogram.size());
  while (bucket-- > 0 && above + histogram[bucket] < k) above += histogram[bucket];
  scratch.clear();
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = magnitudeBits(x[i]);
    if (u >> kShift == bucket) scratch.push_back(u);
  }
  const size_t rank = k - above - 1;  // among the bucket's members, largest first
  std::nth_element(scratch.begin(), scratch.begin() + static_cast<ptrdiff_t>(rank), scratch.end(),
                   std::greater<uint32_t>());
  return scratch[rank];
}

}  // namespace

void TopkCodec::encode(const float* x, size_t n, std::vector<uint8_t>& out) {
  const size_t k = keptCount(n);
  indices_.clear();
  values_.clear();
  if (k > 0) {
    const uint32_t kth = kthLargestMagnitude(x, n, k, bucket_members_);
    // One ordered scan keeps indices sorted, as the payload needs; ties at the k-th
    // magnitude go to the lowest indices.
    size_t above = 0;
    for (size_t i = 0; i < n; ++i) above += magnitudeBits(x[i]) > kth;
    size_t ties = k - above;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t m = magnitudeBits(x[i]);
      if (m > kth || (m == kth && ties > 0)) {
        ties -= m == kth;
        indices_.push_back(static_cast<uint32_t>(i));
        values_.push_back(x[i]);
      }
    }
  }
  sparse::encode(indices_.data(), values_.data(), indices_.size(), n, values_type_, out);
}

void TopkCodec::decode(const uint8_t* payload, size_t bytes, size_t n, float* out,
                       DecodeMode mode) {
  sparse::decode(payload, bytes, n, out, mode, "topk");
}

}  // namespace ranklab
