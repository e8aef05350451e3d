// The one arithmetic step of a sum all-reduce: acc[i] += in[i].
#pragma once

#include <cstddef>

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

}  // namespace ranklab
