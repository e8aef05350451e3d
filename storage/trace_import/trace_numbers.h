// The numbers of a hostile trace made safe: clamped into a range, added without wrapping.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

namespace ranklab {

// A trace's number as an integer in [lo, hi]: beyond it (or NaN) clamped, never converted
// out of range (hostile files hold any double).
inline int64_t clampedInteger(double v, int64_t lo, int64_t hi) {
  if (!(v >= double(lo))) return lo;
  if (v >= double(hi)) return hi;
  return int64_t(v);
}
// a + b, held at the int64 limits instead of wrapping (a crafted trace's sums).
inline int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? INT64_MAX : INT64_MIN;
}
// The same for a number written as text ("12", "ProfilerStep#12"'s "12").
inline int64_t integerIn(const std::string& text, int64_t lo, int64_t hi) {
  return clampedInteger(std::strtod(text.c_str(), nullptr), lo, hi);
}

}  // namespace ranklab
