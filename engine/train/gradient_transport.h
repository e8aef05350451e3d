// What carries a strategy's buffers between ranks, wherever the model's memory is: the host
// ring on host memory; on a GPU either NCCL over the GPU buffers or the host ring through
// host copies (staged, parallel.device_collectives). A strategy is chosen once and a
// transport once, and they meet in strategy_registry.cpp: ZeRO over the transport's shard
// collectives, the all-reduce strategies over its allreduce().
#pragma once

#include <memory>
#include <string>

#include "comm/collectives/allreduce_registry.h"
#include "comm/collectives/shard_collectives.h"
#include "comm/communicator.h"
#include "engine/model/device_memory.h"

namespace ranklab {

enum class TransportKind { kHost, kStaged, kNccl };

class GradientTransport : public ShardCollectives {
 public:
  virtual TransportKind kind() const = 0;
  virtual Communicator& group() = 0;
  // Whose buffers it carries: the model's device memory.
  virtual const DeviceMemory& memory() const = 0;
  // An all-reduce of buffers in memory(), living no longer than this transport, one call at
  // a time: the algorithm itself on the host; staged, each call's floats copied to the host,
  // reduced there and copied back before it returns; NCCL's own ring or tree.
  virtual std::unique_ptr<Allreduce> allreduce(const AllreduceChoice& algorithm) = 0;
  // Buckets may run on a communication thread while backward goes on.
  virtual bool overlapsBackward() const { return true; }
  // Why the buffers cross as they do, for the run's events ("" where nothing needs saying).
  virtual std::string why() const { return ""; }
  // Host memory kept for the copies.
  virtual size_t hostBytesHeld() const { return 0; }
};

}  // namespace ranklab
