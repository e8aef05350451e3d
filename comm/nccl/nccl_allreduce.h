// Sum all-reduce of device buffers through NCCL; ranks find each other through any
// Communicator (MPI in the worker), which carries NCCL's unique id from rank 0.
#pragma once

#include <cstddef>
#include <memory>

#include "comm/communicator.h"

namespace ranklab {

class NcclAllreduce {
 public:
  // Binds this rank to CUDA device `device` and joins the NCCL clique of bootstrap's ranks.
  NcclAllreduce(Communicator& bootstrap, int device);
  ~NcclAllreduce();
  NcclAllreduce(const NcclAllreduce&) = delete;
  NcclAllreduce& operator=(const NcclAllreduce&) = delete;

  // In place over `count` floats of device memory, the sum (or with `mean` the mean) over
  // the ranks; returns when the result is there.
  void run(float* device_data, size_t count, bool mean = false);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ranklab
