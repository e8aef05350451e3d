// All-gather of device buffers through NCCL, over a shared NcclComm: every rank ends with
// every rank's share.
#pragma once

#include <cstddef>
#include <vector>

#include "comm/nccl/nccl_comm.h"
#include "comm/nccl/nccl_piece.h"

namespace ranklab {

class NcclAllGather {
 public:
  explicit NcclAllGather(NcclComm& comm) : comm_(comm) {}

  // recv: size() * send_count floats, block r from rank r's send. In place where
  // send == recv + rank() * send_count. Returns when the result is there.
  void run(const float* send, float* recv, size_t send_count);
  // Uneven shares: each piece's send on its owner into every rank's recv (one ncclBroadcast
  // per piece, grouped). Every rank passes the same pieces in the same order.
  void run(const std::vector<NcclPiece>& pieces);

 private:
  NcclComm& comm_;
};

}  // namespace ranklab
