// One NCCL communicator per rank, shared by the collectives beside it (nccl_allreduce,
// nccl_reduce_scatter, nccl_all_gather); ranks find each other through any Communicator
// (MPI in the worker), which carries NCCL's unique id from rank 0.
#pragma once

#include <memory>

#include "comm/communicator.h"

namespace ranklab {

struct NcclHandles;  // nccl_handles.h

class NcclComm {
 public:
  // Binds this rank to CUDA device `device` and joins the NCCL clique of bootstrap's ranks.
  NcclComm(Communicator& bootstrap, int device);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // NCCL's handles; for the collectives in comm/nccl only.
  NcclHandles& handles() { return *handles_; }

 private:
  int rank_;
  int size_;
  std::unique_ptr<NcclHandles> handles_;
};

}  // namespace ranklab
