#include "comm/nccl/nccl_reduce_scatter.h"

#include "comm/nccl/nccl_handles.h"

namespace ranklab {

using nccl_detail::check;

void NcclReduceScatter::run(const float* send, float* recv, size_t recv_count, bool mean) {
  if (recv_count == 0) return;
  nccl_detail::runCollective(
      comm_.handles(), "reduce-scatter", [&](ncclComm_t comm, cudaStream_t s) {
        check(ncclReduceScatter(send, recv, recv_count, ncclFloat,
                                nccl_detail::meanOrSum(mean, comm_.size()), comm, s),
              "reduce-scatter");
      });
}

void NcclReduceScatter::run(const std::vector<NcclPiece>& pieces, bool mean) {
  if (pieces.empty()) return;
  nccl_detail::runCollective(
      comm_.handles(), "reduce of pieces", [&](ncclComm_t comm, cudaStream_t s) {
        for (const NcclPiece& p : pieces) {
          // The receive buffer matters on the owner alone; the others pass their send buffer.
          float* recv = p.owner == comm_.rank() ? p.recv : const_cast<float*>(p.send);
          check(ncclReduce(p.send, recv, p.count, ncclFloat,
                           nccl_detail::meanOrSum(mean, comm_.size()), p.owner, comm, s),
                "reduce");
        }
      });
}

}  // namespace ranklab
