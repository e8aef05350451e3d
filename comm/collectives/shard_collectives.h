// The collectives a sharded update (ZeRO, engine/train/zero_sync.h) runs over, on buffers of
// one memory space: the host ring's (ring_shard_collectives.h), and the engine's transports
// over it (engine/train/gradient_transport.h): NCCL's on GPU memory, or the host ring's on a
// device's buffers through host copies. So ZeRO is one algorithm, whatever carries its bytes.
// Each rank owns a part of a flat buffer of `total` floats (owned()): a reduction leaves
// there the mean over the ranks, a gather hands each owner's part to every rank. A window is
// [offset, offset + count) of such a buffer, held alone in `window`; a shard holds the
// owned part alone (owned(total).len floats).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "comm/collectives/allreduce.h"
#include "comm/collectives/chunks.h"

namespace ranklab {

class ShardCollectives {
 public:
  virtual ~ShardCollectives() = default;
  virtual int size() const = 0;
  virtual Chunk owned(size_t total) const = 0;
  // The floats a flat buffer is given so the whole-buffer collectives below run in place on
  // equal chunks (NCCL's); `total` where they need no padding.
  virtual size_t paddedCount(size_t total) const { return total; }

  // Whole buffer, in place: the owned part becomes the mean over the ranks.
  virtual void reduceScatterMean(float* data, size_t total) = 0;
  // Whole buffer, in place: every owner's part (already there) to every rank.
  virtual void allGather(float* data, size_t total) = 0;
  // The window's owned part, as the mean over the ranks, into `shard`.
  virtual void reduceScatterMean(float* window, size_t offset, size_t count, size_t total,
                                 float* shard) = 0;
  // Every owner's part of the window, from its `shard`, into every rank's `window`.
  virtual void allGather(const float* shard, float* window, size_t offset, size_t count,
                         size_t total) = 0;

  // Bytes this rank sent and received in the last call (where the collective is a library's,
  // what a ring moves for it: (n - 1) / n of the buffer each way).
  virtual int64_t bytesSent() const = 0;
  virtual int64_t bytesReceived() const = 0;
  // Non-null: each hop from now on is appended here, where the transport can see them.
  virtual void traceInto(CommSpans* /*sink*/) {}
};

// [begin, end) of a window [offset, offset + count) that `owned` covers (begin == end: none).
struct OwnedPart {
  size_t begin, end;
};
inline OwnedPart ownedPartOf(Chunk owned, size_t offset, size_t count) {
  const size_t begin = std::max(offset, owned.begin);
  return {begin, std::max(begin, std::min(offset + count, owned.begin + owned.len))};
}

}  // namespace ranklab
