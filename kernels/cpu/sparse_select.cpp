#include "kernels/cpu/sparse_select.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

namespace ranklab::kernels {

uint32_t magnitudeBits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u & 0x7fffffffu;
}

namespace {

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

void selectTopk(const float* x, size_t n, size_t k, std::vector<uint32_t>& indices,
                std::vector<float>& values, std::vector<uint32_t>& scratch) {
  indices.clear();
  values.clear();
  if (k == 0) return;
  const uint32_t kth = kthLargestMagnitude(x, n, k, scratch);
  // One ordered scan keeps indices sorted, as the payload needs.
  size_t above = 0;
  for (size_t i = 0; i < n; ++i) above += magnitudeBits(x[i]) > kth;
  size_t ties = k - above;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t m = magnitudeBits(x[i]);
    if (m > kth || (m == kth && ties > 0)) {
      ties -= m == kth;
      indices.push_back(static_cast<uint32_t>(i));
      values.push_back(x[i]);
    }
  }
}

void selectAtLeast(const float* x, size_t n, float threshold, std::vector<uint32_t>& indices,
                   std::vector<float>& values) {
  indices.clear();
  values.clear();
  for (size_t i = 0; i < n; ++i) {
    if (std::fabs(x[i]) >= threshold) {
      indices.push_back(static_cast<uint32_t>(i));
      values.push_back(x[i]);
    }
  }
}

}  // namespace ranklab::kernels
