// The CPU's convolution (conv_kernel.h): the input padded once, then GEMMs over chunks of
// output pixels, fp32 ones reading the im2col matrix in place from the padded copy where the
// skinny kernels are chosen (kernels::inPlaceConvGemm), the others through an im2col chunk.
#pragma once

#include <memory>

#include "engine/model/conv_kernel.h"

namespace ranklab {

std::unique_ptr<ConvKernel> makeCpuConvKernel(const ConvSpec& spec);

}  // namespace ranklab
