#include "comm/nccl/nccl_allreduce.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

namespace ranklab {

namespace {

void check(ncclResult_t code, const char* operation) {
  if (code != ncclSuccess) {
    throw std::runtime_error(std::string("NCCL ") + operation + ": " + ncclGetErrorString(code));
  }
}

void check(cudaError_t code, const char* operation) {
  if (code != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA ") + operation + ": " + cudaGetErrorString(code));
  }
}

// Rank 0 makes the id and hands it to every other rank.
ncclUniqueId shareUniqueId(Communicator& bootstrap) {
  ncclUniqueId id{};
  if (bootstrap.rank() == 0) {
    check(ncclGetUniqueId(&id), "get unique id");
    for (int r = 1; r < bootstrap.size(); ++r) bootstrap.sendRecv(&id, sizeof id, r, nullptr, 0, r);
  } else {
    bootstrap.sendRecv(nullptr, 0, 0, &id, sizeof id, 0);
  }
  return id;
}

}  // namespace

struct NcclAllreduce::State {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

NcclAllreduce::NcclAllreduce(Communicator& bootstrap, int device)
    : state_(std::make_unique<State>()) {
  check(cudaSetDevice(device), "set device");
  const ncclUniqueId id = shareUniqueId(bootstrap);
  check(ncclCommInitRank(&state_->comm, bootstrap.size(), id, bootstrap.rank()), "init rank");
  check(cudaStreamCreate(&state_->stream), "create stream");
}

NcclAllreduce::~NcclAllreduce() {
  if (state_->stream != nullptr) cudaStreamDestroy(state_->stream);
  if (state_->comm != nullptr) ncclCommDestroy(state_->comm);
}

void NcclAllreduce::run(float* device_data, size_t count, bool mean) {
  if (count == 0) return;
  // The caller's kernels that wrote the data ran on the default stream: NCCL's stream waits.
  check(cudaStreamSynchronize(cudaStreamLegacy), "wait for the data");
  check(ncclAllReduce(device_data, device_data, count, ncclFloat, mean ? ncclAvg : ncclSum,
                      state_->comm, state_->stream),
        "all-reduce");
  check(cudaStreamSynchronize(state_->stream), "synchronize");
}

}  // namespace ranklab
