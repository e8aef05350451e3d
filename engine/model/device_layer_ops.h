// The passes the layers written once (layers.h) run over a device's memory: each device
// computes them with its own kernels (kernels/cpu, kernels/cuda), so a layer is one class for
// every device and never touches the device's memory itself. All pointers are the device's.
// One of a ComputeDevice's concerns (compute_device.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ranklab {

class DeviceLayerOps {
 public:
  virtual ~DeviceLayerOps() = default;
  // y = max(x, 0).
  virtual void relu(const float* x, float* y, size_t n) const = 0;
  // dx = dy where y > 0, else 0.
  virtual void reluGradient(const float* dy, const float* y, float* dx, size_t n) const = 0;
  // y (B, H/2, W/2, C) = the largest of each 2x2 window of x (B, H, W, C), floor mode;
  // argmax (B, H/2, W/2, C) bytes: which of the four taps won, for backward.
  virtual void maxPool2x2Forward(const float* x, float* y, uint8_t* argmax, int batch, int height,
                                 int width, int channels) const = 0;
  // dx (B, H, W, C) = dy routed to the winning taps, 0 elsewhere (written, not added).
  virtual void maxPool2x2Backward(const float* dy, const uint8_t* argmax, float* dx, int batch,
                                  int height, int width, int channels) const = 0;
  // scale (n) = 0 with probability p, else 1 / (1 - p): the same bits on every device for a
  // key, so a GPU's dropout follows the CPU's.
  virtual void dropoutMask(uint64_t key, float p, float* scale, size_t n) const = 0;
  // out = a * b, elementwise.
  virtual void multiply(const float* a, const float* b, float* out, size_t n) const = 0;
  // Each of `batch` (rows, cols) matrices -> its (cols, rows) transpose.
  virtual void transposeEach(const float* x, float* y, int batch, size_t rows,
                             size_t cols) const = 0;
};

}  // namespace ranklab
