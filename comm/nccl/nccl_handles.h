// An NcclComm's NCCL and CUDA handles and the checks of their calls: included by comm/nccl's
// sources alone, so no other header sees nccl.h.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

namespace ranklab {

// Released by its destructor, whatever of it was made (a constructor that failed half way too).
struct NcclHandles {
  NcclHandles() = default;
  ~NcclHandles();
  NcclHandles(const NcclHandles&) = delete;
  NcclHandles& operator=(const NcclHandles&) = delete;

  int device = 0;  // the rank's GPU, current while a collective is queued
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  // Recorded on the calling thread's stream before each collective; the NCCL stream waits on it.
  cudaEvent_t inputs_written = nullptr;
};

namespace nccl_detail {

// The reduction for a sum or a mean over `ranks` ranks. One rank's mean is its sum: NCCL
// below 2.29.7 leaves the last elements of a one-rank ncclAvg unwritten (NVIDIA/nccl#1950;
// seen on an H200: the last 8 of 50,240 gradients stayed zero), and a one-rank ncclSum is a copy.
inline ncclRedOp_t meanOrSum(bool mean, int ranks) {
  return mean && ranks > 1 ? ncclAvg : ncclSum;
}

// Throws std::runtime_error naming the operation and NCCL's (or CUDA's) cause.
void check(ncclResult_t code, const char* operation);
void check(cudaError_t code, const char* operation);

// Runs `enqueue` (NCCL calls on state.stream, grouped) between the two waits a collective
// needs: for the kernels that wrote its input (queued on the calling thread's own stream, so
// the NCCL stream waits for them on the GPU, the host not held), and for its result.
template <typename Enqueue>
void runCollective(NcclHandles& state, const char* operation, Enqueue enqueue) {
  check(cudaSetDevice(state.device), "set device");
  check(cudaEventRecord(state.inputs_written, cudaStreamPerThread), "mark the data");
  check(cudaStreamWaitEvent(state.stream, state.inputs_written, 0), "wait for the data");
  check(ncclGroupStart(), "group start");
  enqueue(state.comm, state.stream);
  check(ncclGroupEnd(), operation);
  // The host waits: the engine times the communication phase on its clock, and the caller's
  // next kernels (on its own stream) read the result.
  check(cudaStreamSynchronize(state.stream), "synchronize");
}

}  // namespace nccl_detail
}  // namespace ranklab
