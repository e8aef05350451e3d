// Test support: one sharded reduction through ShmSharedModel, for the threads and the
// mpirun tests alike.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "comm/collectives/shm_shared_model.h"

namespace ranklab::testing {

// Writes `mine` into this rank's gradient slot, sums the own chunk over all ranks times
// `scale`, and returns the slot: the own chunk holds the result, the rest is `mine`.
inline std::vector<float> reduceInSharedModel(ShmSharedModel& model, const std::vector<float>& mine,
                                              float scale) {
  std::copy(mine.begin(), mine.end(), model.grads());
  model.reduceOwnChunk(scale);
  std::vector<float> slot(model.grads(), model.grads() + mine.size());
  model.publish();  // every rank has read this slot before anyone writes it again
  return slot;
}

// The chunks of `parts` ranks tile [0, count) in rank order with edges on 16-float lines.
inline void expectChunksTile(size_t count, int parts) {
  size_t next = 0;
  for (int c = 0; c < parts; ++c) {
    const Chunk chunk = lineAlignedChunk(count, parts, c);
    EXPECT_EQ(chunk.begin, next) << "count " << count << " chunk " << c << " of " << parts;
    EXPECT_TRUE(chunk.begin % 16 == 0 || chunk.begin == count) << "count " << count;
    next = chunk.begin + chunk.len;
  }
  EXPECT_EQ(next, count) << parts << " chunks of " << count;
}

}  // namespace ranklab::testing
