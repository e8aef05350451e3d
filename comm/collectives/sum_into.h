// The one arithmetic step of a sum all-reduce: acc[i] += in[i].
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace ranklab {

// Blocks of 8 so -O2 vectorizes the body (its cheap cost model skips plain loops with an
// unknown trip count); the tail is scalar.
inline void sumInto(float* __restrict acc, const float* __restrict in, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (size_t j = 0; j < 8; ++j) acc[i + j] += in[i + j];
  }
  for (; i < n; ++i) acc[i] += in[i];
}

// out[i] = (((in[0][i] + in[1][i]) + in[2][i]) + ...) * scale in that fixed order, so whoever
// computes an element gets the same bits. Works block by block in a local accumulator,
// which stays in L1 while the inputs stream past; out may alias any input.
inline void sumInOrder(float* out, const float* const* in, int inputs, size_t n,
                       float scale = 1.f) {
  constexpr size_t kBlock = 1024;
  float acc[kBlock];
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t m = std::min(kBlock, n - b);
    std::memcpy(acc, in[0] + b, m * sizeof(float));
    for (int k = 1; k < inputs; ++k) sumInto(acc, in[k] + b, m);
    if (scale != 1.f)
      for (size_t i = 0; i < m; ++i) acc[i] *= scale;
    std::memcpy(out + b, acc, m * sizeof(float));
  }
}

}  // namespace ranklab
