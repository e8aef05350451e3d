#include "comm/ps/key_ranges.h"

#include <algorithm>

namespace ranklab {

std::vector<KeyRange> evenKeyRanges(size_t keys, int servers) {
  std::vector<KeyRange> ranges;
  const size_t n = static_cast<size_t>(std::max(servers, 1));
  const size_t base = keys / n, extra = keys % n;
  size_t begin = 0;
  for (size_t s = 0; s < n; ++s) {
    const size_t size = base + (s < extra ? 1 : 0);
    ranges.push_back({begin, begin + size});
    begin += size;
  }
  return ranges;
}

}  // namespace ranklab
