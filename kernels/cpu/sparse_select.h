// What the sparse codecs send, as a device that encodes on its own side must find it too:
// the indices (ascending) and values of the selected elements.
//   topk:      the k of largest magnitude; ties at the k-th magnitude to the lowest
//              indices; NaN larger than inf (magnitudes compared as their bits)
//   threshold: every element with |x| >= threshold (never NaN)
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ranklab::kernels {

// Bits of |x|: for non-negative floats the unsigned order of the bits is the value order.
uint32_t magnitudeBits(float x);

// Replace `indices` and `values` with the k (<= n) selected. `scratch` is reused between
// calls.
void selectTopk(const float* x, size_t n, size_t k, std::vector<uint32_t>& indices,
                std::vector<float>& values, std::vector<uint32_t>& scratch);
void selectAtLeast(const float* x, size_t n, float threshold, std::vector<uint32_t>& indices,
                   std::vector<float>& values);

// Throws std::out_of_range naming the first of indices[0, k) not below `length` (a scatter's
// destination) and the length: every device refuses it before writing anything.
inline void checkScatterIndices(const uint32_t* indices, size_t k, size_t length) {
  for (size_t j = 0; j < k; ++j) {
    if (indices[j] >= length) {
      throw std::out_of_range("scatter: index " + std::to_string(indices[j]) + " (pair " +
                              std::to_string(j) + ") is out of range of a destination of " +
                              std::to_string(length) + " floats");
    }
  }
}

}  // namespace ranklab::kernels
