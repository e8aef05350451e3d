// The ranks that hold one model's tensor-parallel slices, and the sums that join them
// (Megatron's f and g; engine/model/tensor_parallel.h).
#pragma once

#include <cstdint>
#include <vector>

#include "comm/collectives/ring_allreduce.h"
#include "comm/communicator.h"
#include "engine/model/compute_device.h"

namespace ranklab {

// What the slices' all-reduces cost since the last take().
struct TensorParallelCounts {
  int64_t allreduces = 0;
  int64_t bytes_tx = 0, bytes_rx = 0;
  int64_t forward_ns = 0;   // inside the layers' forward passes (g)
  int64_t backward_ns = 0;  // inside their backward passes (f)
};

// The ranks that hold the slices of one model (the layout's tensor group). The sum is the
// ring's, so every slice gets the same bits and replicated layers stay equal.
class TensorGroup {
 public:
  explicit TensorGroup(Communicator& comm) : comm_(comm), ring_(comm) {}
  int rank() const { return comm_.rank(); }
  int size() const { return comm_.size(); }
  // data[0, count) of `device`'s memory summed over the slices, in place (through a host
  // copy off the host); timed into forward or backward.
  void sum(float* data, size_t count, bool in_backward, const ComputeDevice& device);
  TensorParallelCounts take();

 private:
  Communicator& comm_;
  RingAllreduce ring_;
  TensorParallelCounts counts_;
  std::vector<float> host_;  // the host copy summed off the host
};

}  // namespace ranklab
