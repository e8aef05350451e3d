// The CUDA device's convolution (conv_kernel.h): im2col over chunks of whole images (columns
// in W's (Cin, k, k) order, so W is used as PyTorch lays it out), then the device's products
// (cuBLAS, TF32 where the job allows); the columns of forward's last chunk are kept for
// backward, which runs the chunks last first.
#pragma once

#include <memory>

#include "engine/model/compute_device.h"
#include "engine/model/conv_kernel.h"

namespace ranklab {

// On GPU `index`, which `device` is.
std::unique_ptr<ConvKernel> makeCudaConvKernel(const ConvSpec& spec, const ComputeDevice& device,
                                               int index);

}  // namespace ranklab
