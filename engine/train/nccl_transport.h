// The GPU buffers carried by NCCL, every rank on its own GPU: one NCCL all-reduce (mean) of
// a buffer, NCCL choosing its ring or tree, and ZeRO's collectives. Rank r owns
// [r c, (r + 1) c) of a flat buffer, c = ceil(total / ranks), the chunks ncclReduceScatter
// and ncclAllGather give each rank: a buffer padded to ranks x c floats (paddedCount) runs
// them in place; a window, or an unpadded buffer, goes to and from its owners in pieces
// (one ncclReduce or ncclBroadcast per owner, grouped).
#pragma once

#include <vector>

#include "comm/nccl/nccl_all_gather.h"
#include "comm/nccl/nccl_reduce_scatter.h"
#include "engine/train/gradient_transport.h"

namespace ranklab {

class NcclTransport : public GradientTransport {
 public:
  // `gpu`: this rank's CUDA device index, the one `memory`'s buffers are on.
  NcclTransport(Communicator& group, const DeviceMemory& memory, int gpu);

  TransportKind kind() const override { return TransportKind::kNccl; }
  Communicator& group() override { return group_; }
  const DeviceMemory& memory() const override { return memory_; }
  // NCCL's own: `algorithm` is not its to choose.
  std::unique_ptr<Allreduce> allreduce(const AllreduceChoice& algorithm) override;
  // The whole gradient after backward, as one call (buckets on a thread of their own would
  // need that thread bound to the GPU and ordered after backward's stream).
  bool overlapsBackward() const override { return false; }

  int size() const override { return nccl_.size(); }
  Chunk owned(size_t total) const override;
  size_t paddedCount(size_t total) const override;
  void reduceScatterMean(float* data, size_t total) override;
  void allGather(float* data, size_t total) override;
  void reduceScatterMean(float* window, size_t offset, size_t count, size_t total,
                         float* shard) override;
  void allGather(const float* shard, float* window, size_t offset, size_t count,
                 size_t total) override;
  int64_t bytesSent() const override { return bytes_; }
  int64_t bytesReceived() const override { return bytes_; }

 private:
  size_t chunkOf(size_t total) const;
  // An owner's part of a window: where it starts in the window and (on the owner) in its shard.
  struct Part {
    int owner;
    size_t in_window, in_shard, len;
    bool mine;
  };
  // Each owner's part of the window [offset, offset + count) of a `total`-float buffer.
  std::vector<Part> partsOf(size_t offset, size_t count, size_t total) const;
  // What a ring moves per rank each way for `floats` floats: (n - 1) / n of them.
  void countRingEquivalent(size_t floats);

  Communicator& group_;
  const DeviceMemory& memory_;
  NcclComm nccl_;
  NcclReduceScatter reduce_scatter_;
  NcclAllGather all_gather_;
  int64_t bytes_ = 0;
};

}  // namespace ranklab
