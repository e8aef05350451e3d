// The gradient sync for a model on a compute device (train.device): the strategy itself
// where the device computes in host memory; on a GPU either NCCL over the GPU buffers or the
// strategy run on host copies (parallel.device_collectives), a codec's work done on the GPU
// first where it can be (device_codec_sync.h, powersgd_sync.h, and a parameter
// server's pushes: ps_worker_sync.h), so only its payload or small matrices come down.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

struct DeviceSync {
  std::unique_ptr<GradientSync> sync;
  std::string how;  // "" on the CPU; else what crosses ranks and why, for the run's events
};

// Collective over `world`, as makeGradientSync. Throws std::invalid_argument when the job
// asks for "nccl" and NCCL cannot run (two ranks on one GPU, a build without NCCL).
DeviceSync makeDeviceSync(const JobSpec& job, Communicator& world,
                          std::vector<MatrixBlock> matrices, const ComputeDevice& device);

// The rank's place among the ranks of its host (Open MPI's local rank; else its rank).
int localRank(const Communicator& world);

}  // namespace ranklab
