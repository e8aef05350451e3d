// Where a network's layers compute and its flat buffers live: a property of the network,
// not calls into kernels/cpu scattered through the engine. A device has five concerns,
// each its own interface so code names only the one it uses: its layers (device_layers.h),
// the passes the layers written once run (device_layer_ops.h), its memory and the
// optimizer's loops over it (device_memory.h), the codecs' encode (device_codec_ops.h), and
// the sums and products the rest needs (device_blas.h). The CPU device computes over
// kernels/cpu and keeps the buffers in host memory; the CUDA device computes over cuBLAS and
// kernels/cuda, in device memory. Every layer is written once (layers.h) and runs on either
// through its passes; a convolution's algorithm is each device's own (conv_kernel.h).
#pragma once

#include <functional>
#include <string>

#include "engine/model/device_blas.h"
#include "engine/model/device_codec_ops.h"
#include "engine/model/device_layer_ops.h"
#include "engine/model/device_layers.h"
#include "engine/model/device_memory.h"

namespace ranklab {

class ComputeDevice : public DeviceLayers,
                      public DeviceLayerOps,
                      public DeviceMemory,
                      public DeviceCodecOps,
                      public DeviceBlas {
 public:
  virtual std::string name() const = 0;  // "cpu", "cuda:0"
};

// The host: layers over kernels/cpu (OpenBLAS, oneDNN, our AVX kernels), host memory.
const ComputeDevice& cpuDevice();

// How a GPU computes, from the job.
struct DeviceOptions {
  bool tf32 = false;  // train.tf32: fp32 products on TF32 tensor cores
};

// The device a job's train.device names: "cpu", "cuda" (this rank's GPU: its local rank
// modulo the GPUs it sees) or "cuda:N". Throws std::invalid_argument naming the value and
// why it cannot be used (a build without CUDA, no usable GPU, N out of range, options the
// CPU does not have).
const ComputeDevice& deviceNamed(const std::string& spec, int local_rank = 0,
                                 DeviceOptions options = {});

// A device a train.device name stands for beside the built-in ones (a test's device, whose
// memory the host may not touch): `make` gives it for a rank's local index, and may be
// called from every rank's thread. Job files name only the built-in devices (validation).
using DeviceMaker = std::function<const ComputeDevice&(int local_rank)>;
void registerDevice(const std::string& name, DeviceMaker make);

}  // namespace ranklab
