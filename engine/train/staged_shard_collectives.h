// ZeRO's collectives on a device's buffers that the host may not read (a GPU's without NCCL,
// or two ranks sharing one GPU): each call copies what it needs to the host, runs the host
// ring (ring_shard_collectives.h) there and copies what changed back, so the shards and the
// optimizer state stay on the device and the result is the ring's bit for bit.
#pragma once

#include <vector>

#include "comm/collectives/ring_shard_collectives.h"
#include "engine/model/device_memory.h"

namespace ranklab {

class StagedShardCollectives : public ShardCollectives {
 public:
  StagedShardCollectives(Communicator& comm, const DeviceMemory& memory)
      : ring_(comm), memory_(memory) {}

  int size() const override { return ring_.size(); }
  Chunk owned(size_t total) const override { return ring_.owned(total); }
  void reduceScatterMean(float* data, size_t total) override;
  void allGather(float* data, size_t total) override;
  void reduceScatterMean(float* window, size_t offset, size_t count, size_t total,
                         float* shard) override;
  void allGather(const float* shard, float* window, size_t offset, size_t count,
                 size_t total) override;
  int64_t bytesSent() const override { return ring_.bytesSent(); }
  int64_t bytesReceived() const override { return ring_.bytesReceived(); }
  void traceInto(CommSpans* sink) override { ring_.traceInto(sink); }

 private:
  // Host copies of the window and of the shard, sized for this call.
  float* hostWindow(size_t count);
  float* hostShard(size_t total);

  RingShardCollectives ring_;
  const DeviceMemory& memory_;
  std::vector<float> window_, shard_;
};

}  // namespace ranklab
