// Reduce-scatter of device buffers through NCCL, over a shared NcclComm: each rank ends with
// the sum (or mean) over the ranks of its own share.
#pragma once

#include <cstddef>
#include <vector>

#include "comm/nccl/nccl_comm.h"
#include "comm/nccl/nccl_piece.h"

namespace ranklab {

class NcclReduceScatter {
 public:
  explicit NcclReduceScatter(NcclComm& comm) : comm_(comm) {}

  // send: size() * recv_count floats; rank r's recv (recv_count floats) gets block r reduced.
  // In place where recv == send + rank() * recv_count. Returns when the result is there.
  void run(const float* send, float* recv, size_t recv_count, bool mean);
  // Uneven shares: each piece's send reduced into its owner's recv (one ncclReduce per piece,
  // grouped). Every rank passes the same pieces in the same order.
  void run(const std::vector<NcclPiece>& pieces, bool mean);

 private:
  NcclComm& comm_;
};

}  // namespace ranklab
