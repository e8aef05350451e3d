// The host ring as a transport (gradient_transport.h): over host memory as it is, or over a
// device's buffers that the host may not read (a GPU's without NCCL, or two ranks sharing
// one GPU) through host copies: each call copies what it needs to the host, runs the ring
// there and copies what changed back, so the shards, the optimizer state and the mean
// gradient stay on the device and the result is the ring's bit for bit.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "comm/collectives/ring_shard_collectives.h"
#include "engine/train/gradient_transport.h"

namespace ranklab {

class HostTransport : public GradientTransport {
 public:
  HostTransport(Communicator& group, const DeviceMemory& memory)
      : group_(group), ring_(group), memory_(memory) {}

  TransportKind kind() const override { return TransportKind::kHost; }
  Communicator& group() override { return group_; }
  const DeviceMemory& memory() const override { return memory_; }
  std::unique_ptr<Allreduce> allreduce(const AllreduceChoice& algorithm) override {
    return algorithm.make(group_);
  }

  int size() const override { return ring_.size(); }
  Chunk owned(size_t total) const override { return ring_.owned(total); }
  void reduceScatterMean(float* data, size_t total) override {
    ring_.reduceScatterMean(data, total);
  }
  void allGather(float* data, size_t total) override { ring_.allGather(data, total); }
  void reduceScatterMean(float* window, size_t offset, size_t count, size_t total,
                         float* shard) override {
    ring_.reduceScatterMean(window, offset, count, total, shard);
  }
  void allGather(const float* shard, float* window, size_t offset, size_t count,
                 size_t total) override {
    ring_.allGather(shard, window, offset, count, total);
  }
  int64_t bytesSent() const override { return ring_.bytesSent(); }
  int64_t bytesReceived() const override { return ring_.bytesReceived(); }
  void traceInto(CommSpans* sink) override { ring_.traceInto(sink); }

 protected:
  Communicator& group_;
  RingShardCollectives ring_;
  const DeviceMemory& memory_;
};

class StagedTransport : public HostTransport {
 public:
  // `why`: why the copies, for the run's events (gradient_transport.h's why()).
  StagedTransport(Communicator& group, const DeviceMemory& memory, std::string why)
      : HostTransport(group, memory), why_(std::move(why)) {}

  TransportKind kind() const override { return TransportKind::kStaged; }
  std::unique_ptr<Allreduce> allreduce(const AllreduceChoice& algorithm) override;
  std::string why() const override { return why_; }
  // Read on the training thread while a comm thread's all-reduce may grow the copies.
  size_t hostBytesHeld() const override { return held_floats_.load() * sizeof(float); }

  void reduceScatterMean(float* data, size_t total) override;
  void allGather(float* data, size_t total) override;
  void reduceScatterMean(float* window, size_t offset, size_t count, size_t total,
                         float* shard) override;
  void allGather(const float* shard, float* window, size_t offset, size_t count,
                 size_t total) override;

  // The host copy of a window (or a whole buffer), sized for this call.
  float* hostWindow(size_t count);

 private:
  float* hostShard(size_t total);

  std::string why_;
  std::vector<float> window_, shard_;
  std::atomic<size_t> held_floats_ = 0;  // window_ and shard_ together
};

}  // namespace ranklab
