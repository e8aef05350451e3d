// The CUDA compute device (train.device = "cuda" / "cuda:N"): a network's layers compute on
// one GPU (the layers written once, engine/model/layers.h, over its passes) and its flat buffers
// live in that GPU's memory. Built only where ranklab has CUDA (RANKLAB_HAVE_CUDA).
#pragma once

#include "engine/model/compute_device.h"

namespace ranklab {

// How many GPUs there are: kernels::usableGpus (kernels/gpu_probe.h).
// GPU `index`'s device, one per index and options for the life of the process. Throws
// std::invalid_argument naming the index and the count when it is out of range, or when
// this build's kernels cannot run on that GPU (its architecture was not compiled for).
const ComputeDevice& cudaDevice(int index, DeviceOptions options = {});

}  // namespace ranklab
