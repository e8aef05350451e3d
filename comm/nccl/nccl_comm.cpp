#include "comm/nccl/nccl_comm.h"

#include "comm/nccl/nccl_handles.h"

namespace ranklab {

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
    : rank_(bootstrap.rank()), size_(bootstrap.size()), handles_(std::make_unique<NcclHandles>()) {
  handles_->device = device;
  check(cudaSetDevice(device), "set device");
  const ncclUniqueId id = shareUniqueId(bootstrap);
  check(ncclCommInitRank(&handles_->comm, size_, id, rank_), "init rank");
  check(cudaStreamCreate(&handles_->stream), "create stream");
  // Only ordering is asked of it: no timestamps.
  check(cudaEventCreateWithFlags(&handles_->inputs_written, cudaEventDisableTiming),
        "create event");
}

NcclComm::~NcclComm() = default;

}  // namespace ranklab
