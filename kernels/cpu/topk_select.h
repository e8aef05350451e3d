// The k elements of largest magnitude, as the topk codec sends them and a device that
// encodes on its own side must find them: indices ascending, ties at the k-th magnitude to
// the lowest indices, NaN larger than inf (magnitudes compared as their bits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ranklab::kernels {

// Bits of |x|: for non-negative floats the unsigned order of the bits is the value order.
uint32_t magnitudeBits(float x);

// Appends the k (<= n) selected indices and their values to `indices` and `values`.
// `scratch` is reused between calls.
void selectTopk(const float* x, size_t n, size_t k, std::vector<uint32_t>& indices,
                std::vector<float>& values, std::vector<uint32_t>& scratch);

}  // namespace ranklab::kernels
