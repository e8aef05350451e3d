// An NcclComm's NCCL and CUDA handles and the checks of their calls: included by comm/nccl's
// sources alone, so no other header sees nccl.h.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

namespace ranklab {

struct NcclHandles {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

namespace nccl_detail {

// Throws std::runtime_error naming the operation and NCCL's (or CUDA's) cause.
void check(ncclResult_t code, const char* operation);
void check(cudaError_t code, const char* operation);

// Runs `enqueue` (NCCL calls on state.stream, grouped) between the two waits a collective
// needs: for the kernels that wrote its input on the default stream, and for its result.
template <typename Enqueue>
void runCollective(NcclHandles& state, const char* operation, Enqueue enqueue) {
  check(cudaStreamSynchronize(cudaStreamLegacy), "wait for the data");
  check(ncclGroupStart(), "group start");
  enqueue(state.comm, state.stream);
  check(ncclGroupEnd(), operation);
  check(cudaStreamSynchronize(state.stream), "synchronize");
}

}  // namespace nccl_detail
}  // namespace ranklab
