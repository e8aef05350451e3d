// The ranks that hold one model's tensor-parallel slices, and the collectives that join them
// (Megatron's f and g; engine/model/tensor_parallel.h; and, under sequence parallelism, the
// all-gathers and reduce-scatters that replace them: engine/model/sequence_parallel.h).
#pragma once

#include <cstdint>
#include <vector>

#include "comm/collectives/chunks.h"
#include "comm/collectives/ring_allreduce.h"
#include "comm/communicator.h"
#include "engine/model/compute_device.h"

namespace ranklab {

// What the slices' collectives cost since the last take().
struct TensorParallelCounts {
  int64_t allreduces = 0;
  int64_t reduce_scatters = 0, all_gathers = 0;  // sequence parallelism's
  int64_t bytes_tx = 0, bytes_rx = 0;
  int64_t forward_ns = 0;   // inside the layers' forward passes (g)
  int64_t backward_ns = 0;  // inside their backward passes (f)
};

// The ranks that hold the slices of one model (the layout's tensor group). The sum is the
// ring's, so every slice gets the same bits and replicated layers stay equal; its
// reduce-scatter leaves each slice the ring's summed chunk, bit for bit the sum's there.
class TensorGroup {
 public:
  // `sequence_parallel`: a GPT's blocks keep their LayerNorms and residuals on this slice's
  // rows alone (parallel.sequence_parallel).
  explicit TensorGroup(Communicator& comm, bool sequence_parallel = false)
      : comm_(comm), ring_(comm), sequence_parallel_(sequence_parallel) {}
  int rank() const { return comm_.rank(); }
  int size() const { return comm_.size(); }
  bool sequenceParallel() const { return sequence_parallel_ && comm_.size() > 1; }
  // data[0, count) of `device`'s memory summed over the slices, in place (through a host
  // copy off the host); timed into forward or backward.
  void sum(float* data, size_t count, bool in_backward, const ComputeDevice& device);
  // The part of a buffer of `count` floats this slice holds after reduceScatter and gives
  // to allGather (rows of its own when count is a whole number of rows per slice).
  Chunk ownedPart(size_t count) const { return ring_.ownedChunk(count); }
  // data[ownedPart(count)] becomes the sum over the slices; the rest is left partial.
  void reduceScatter(float* data, size_t count, bool in_backward, const ComputeDevice& device);
  // Every slice's ownedPart(count) of data, already in place, to every slice.
  void allGather(float* data, size_t count, bool in_backward, const ComputeDevice& device);
  // whole[0, count): this slice's `part` (ownedPart(count)'s length) put in its place, then
  // all-gathered.
  void allGatherFrom(const float* part, float* whole, size_t count, bool in_backward,
                     const ComputeDevice& device);
  TensorParallelCounts take();

 private:
  enum class Op { kSum, kReduceScatter, kAllGather };
  void run(Op op, float* data, size_t count, bool in_backward, const ComputeDevice& device);
  void ringOp(Op op, float* data, size_t count);

  Communicator& comm_;
  RingAllreduce ring_;
  bool sequence_parallel_;
  TensorParallelCounts counts_;
  std::vector<float> host_;  // the host copy of what runs off the host
};

}  // namespace ranklab
