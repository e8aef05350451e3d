#include "comm/nccl/nccl_comm.h"

#include <stdexcept>
#include <string>

#include "comm/nccl/nccl_comm_state.h"

namespace ranklab {

namespace nccl_detail {

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

}  // namespace nccl_detail

namespace {

using nccl_detail::check;

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

NcclComm::NcclComm(Communicator& bootstrap, int device)
    : rank_(bootstrap.rank()), size_(bootstrap.size()), state_(std::make_unique<State>()) {
  check(cudaSetDevice(device), "set device");
  const ncclUniqueId id = shareUniqueId(bootstrap);
  check(ncclCommInitRank(&state_->comm, size_, id, rank_), "init rank");
  check(cudaStreamCreate(&state_->stream), "create stream");
}

NcclComm::~NcclComm() {
  if (state_->stream != nullptr) cudaStreamDestroy(state_->stream);
  if (state_->comm != nullptr) ncclCommDestroy(state_->comm);
}

}  // namespace ranklab
