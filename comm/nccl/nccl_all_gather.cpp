#include "comm/nccl/nccl_all_gather.h"

#include "comm/nccl/nccl_handles.h"

namespace ranklab {

using nccl_detail::check;

void NcclAllGather::run(const float* send, float* recv, size_t send_count) {
  if (send_count == 0) return;
  nccl_detail::runCollective(comm_.handles(), "all-gather", [&](ncclComm_t comm, cudaStream_t s) {
    check(ncclAllGather(send, recv, send_count, ncclFloat, comm, s), "all-gather");
  });
}

void NcclAllGather::run(const std::vector<NcclPiece>& pieces) {
  if (pieces.empty()) return;
  nccl_detail::runCollective(
      comm_.handles(), "gather of pieces", [&](ncclComm_t comm, cudaStream_t s) {
        for (const NcclPiece& p : pieces) {
          // The send buffer matters on the owner alone; the others pass their receive buffer.
          const float* send = p.owner == comm_.rank() ? p.send : p.recv;
          check(ncclBroadcast(send, p.recv, p.count, ncclFloat, p.owner, comm, s), "broadcast");
        }
      });
}

}  // namespace ranklab
