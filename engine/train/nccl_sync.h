// Synchronous data parallel on GPUs (parallel.device_collectives = "nccl"): after backward,
// one NCCL all-reduce (mean) of the flat gradient in GPU memory, every rank on its own GPU.
// NCCL picks its own ring or tree; ranks find each other through the world's Communicator.
#pragma once

#include <memory>

#include "comm/nccl/nccl_allreduce.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

class NcclSync : public GradientSync {
 public:
  // `gpu`: this rank's CUDA device index (the model's).
  NcclSync(Communicator& peers, int gpu);

  Communicator& peers() override { return peers_; }
  SyncStats sync(float* grads, size_t count) override;

 private:
  Communicator& peers_;
  NcclComm nccl_;
  NcclAllreduce allreduce_;
};

}  // namespace ranklab
