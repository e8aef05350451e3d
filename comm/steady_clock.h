// Steady-clock nanoseconds, for timing phases inside collectives and codecs.
#pragma once

#include <chrono>
#include <cstdint>

namespace ranklab {

inline int64_t steadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace ranklab
