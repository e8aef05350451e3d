#include "comm/nccl/nccl_allreduce.h"

#include "comm/nccl/nccl_handles.h"

namespace ranklab {

void NcclAllreduce::run(float* device_data, size_t count, bool mean) {
  if (count == 0) return;
  nccl_detail::runCollective(comm_.handles(), "all-reduce", [&](ncclComm_t comm, cudaStream_t s) {
    nccl_detail::check(ncclAllReduce(device_data, device_data, count, ncclFloat,
                                     nccl_detail::meanOrSum(mean, comm_.size()), comm, s),
                       "all-reduce");
  });
}

}  // namespace ranklab
