// Megatron-style tensor parallelism for the MLP (Shoeybi et al., "Megatron-LM", 2019): the
// Linear layers are taken in pairs, the first column-parallel (each slice computes out/t of
// its outputs, so the ReLU after it runs on the slice), the second row-parallel (each slice
// multiplies its in/t inputs and the partial outputs are summed). Two conjugate operators
// join them: f before a pair (identity forward, all-reduce of the input gradient backward)
// and g after it (all-reduce forward, identity backward): one all-reduce per pair forward and
// one backward. The first pair has no f when the data is its input (the data needs no
// gradient). A CNN's head is split the same way; its convolutions run whole on every slice,
// so f before the head gives them the whole input gradient and their gradients agree. A
// last unpaired Linear (the classifier of an even number of hidden layers) is replicated.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/collectives/ring_allreduce.h"
#include "comm/communicator.h"
#include "engine/model/network.h"

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

// This slice of `whole` (an MLP of Linear, ReLU layers, or a CNN; no dropout): its column- and
// row-parallel Linears hold their rows and columns of whole's parameters, replicated ones
// (the row-parallel biases, an unpaired classifier, a CNN's convolutions) all of theirs. Throws
// std::invalid_argument naming the layer whose width does not divide by group.size(), or a
// layer it cannot split. `group` must outlive the network.
Network sliceForTensorParallel(const Network& whole, TensorGroup& group);

}  // namespace ranklab
