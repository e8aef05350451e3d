// Sum (or mean) all-reduce of device buffers through NCCL, over a shared NcclComm.
#pragma once

#include <cstddef>

#include "comm/nccl/nccl_comm.h"

namespace ranklab {

class NcclAllreduce {
 public:
  explicit NcclAllreduce(NcclComm& comm) : comm_(comm) {}

  // In place over `count` floats of device memory, the sum (or with `mean` the mean) over
  // the ranks; returns when the result is there.
  void run(float* device_data, size_t count, bool mean = false);

 private:
  NcclComm& comm_;
};

}  // namespace ranklab
