// How the parameter server's keys (indices into the flat parameter buffer) are sliced
// across servers. A replaceable piece, as in ps-lite: any slicer that returns contiguous,
// ordered, covering ranges works with KvWorker and the servers.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace ranklab {

struct KeyRange {
  size_t begin = 0;
  size_t end = 0;  // one past the last key
  size_t size() const { return end - begin; }
  bool operator==(const KeyRange&) const = default;
};

using KeySlicer = std::function<std::vector<KeyRange>(size_t keys, int servers)>;

// Equal shares; the first keys % servers ranges take one key more.
std::vector<KeyRange> evenKeyRanges(size_t keys, int servers);

}  // namespace ranklab
