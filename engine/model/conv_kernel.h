// A stride-1 convolution's algorithm on one device, behind the one Conv2d (layers.h): each
// device convolves its own way (the CPU runs its GEMMs in place over chunks of a padded copy,
// CUDA im2cols whole images for cuBLAS), so the layer is written once and the algorithms stay
// the devices' own. All pointers are the kernel's device's: x (B, H, W, Cin), y (B, outH,
// outW, Cout), w (Cout, Cin, k, k) in PyTorch's order, b (Cout).
#pragma once

#include <memory>
#include <vector>

#include "engine/model/layer.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/mixed_gemm.h"

namespace ranklab {

// Square kernel, zero padding kernel / 2 on every side.
struct ConvSpec {
  Shape input;
  int out_channels = 0;
  int kernel = 1;
};

class ConvKernel {
 public:
  virtual ~ConvKernel() = default;
  // y = conv(x, w) + b, the products in `precision` accumulated in fp32.
  virtual void forward(const float* x, const float* w, const float* b, float* y, int batch,
                       kernels::Precision precision) = 0;
  // dw, db = (or += where accumulate) the batch's; dx (written, where not null). x and w are
  // the last forward's.
  virtual void backward(const float* x, const float* w, const float* dy, float* dx, float* dw,
                        float* db, int batch, kernels::Precision precision, bool accumulate) = 0;
  // The products of one training step at this batch, each at the largest shape it runs at,
  // for the bench's kernel-choice table.
  virtual std::vector<kernels::GemmShape> gemms(int batch) const = 0;
};

}  // namespace ranklab
