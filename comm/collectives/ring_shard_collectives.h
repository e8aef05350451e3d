// ZeRO's collectives on host buffers over the ring (ring_allreduce.h): each rank owns the
// ring's chunk, and sums each element in the ring's order, so a sharded update is bit-equal
// to the ring all-reduce's.
#pragma once

#include "comm/collectives/ring_allreduce.h"
#include "comm/collectives/shard_collectives.h"

namespace ranklab {

class RingShardCollectives : public ShardCollectives {
 public:
  explicit RingShardCollectives(Communicator& comm) : comm_(comm), ring_(comm) {}

  int size() const override { return comm_.size(); }
  Chunk owned(size_t total) const override { return ring_.ownedChunk(total); }
  void reduceScatterMean(float* data, size_t total) override;
  void allGather(float* data, size_t total) override { ring_.allGather(data, total); }
  void reduceScatterMean(float* window, size_t offset, size_t count, size_t total,
                         float* shard) override;
  void allGather(const float* shard, float* window, size_t offset, size_t count,
                 size_t total) override;
  int64_t bytesSent() const override { return ring_.bytesSent(); }
  int64_t bytesReceived() const override { return ring_.bytesReceived(); }
  void traceInto(CommSpans* sink) override { ring_.traceInto(sink); }

 private:
  float meanScale() const { return 1.f / static_cast<float>(comm_.size()); }

  Communicator& comm_;
  RingAllreduce ring_;
};

}  // namespace ranklab
