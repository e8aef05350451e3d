// Where a network's layers compute and its flat buffers live: a property of the network,
// not calls into kernels/cpu scattered through the engine. Models ask a device for each
// layer by kind (models.cpp) and for their buffers and loss head (network.cpp). The CPU
// device builds the layers of engine/model/layers.h over kernels/cpu and keeps the buffers
// in host memory; a CUDA device (the GPU issue) builds its own layers over cuBLAS and its
// kernels, and keeps the buffers in device memory.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "engine/model/layer.h"
#include "engine/model/loss_head.h"

namespace ranklab {

enum class LayerKind { kLinear, kConv2d, kMaxPool2d, kReLU, kDropout, kFlatten };

// One layer a model wants, whatever computes it.
struct LayerRequest {
  LayerKind kind = LayerKind::kLinear;
  std::string name;  // "fc0", "conv1"
  Shape input;
  int outputs = 0;    // Linear: features; Conv2d: channels
  int kernel = 0;     // Conv2d: square kernel side
  float dropout = 0;  // Dropout: probability
  // Linear: false for a row-parallel slice other than the first (tensor parallelism): it
  // holds and learns the bias but adds none, so the slices' sum has it once.
  bool adds_bias = true;
};

// A run of floats in a device's memory, zeroed when made.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual float* data() = 0;
  virtual size_t size() const = 0;
};

class ComputeDevice {
 public:
  virtual ~ComputeDevice() = default;
  virtual std::string name() const = 0;  // "cpu"
  virtual std::unique_ptr<Layer> makeLayer(const LayerRequest& request) const = 0;
  virtual std::unique_ptr<LossHead> makeLossHead() const = 0;
  virtual std::unique_ptr<DeviceBuffer> allocate(size_t floats) const = 0;
};

// The host: layers over kernels/cpu (OpenBLAS, oneDNN, our AVX kernels), host memory.
const ComputeDevice& cpuDevice();

}  // namespace ranklab
