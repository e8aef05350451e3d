// How a buffer of `count` floats is cut into `parts` nearly equal chunks, the first
// count % parts chunks one float longer. The ring and the shared-memory all-reduce agree
// on it so each rank reduces the same share.
#pragma once

#include <algorithm>
#include <cstddef>

namespace ranklab {

struct Chunk {
  size_t begin = 0;
  size_t len = 0;
};

// Chunk c, 0 <= c < parts.
inline Chunk evenChunk(size_t count, int parts, int c) {
  const size_t base = count / parts, extra = count % parts;
  const size_t i = static_cast<size_t>(c);
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

}  // namespace ranklab
