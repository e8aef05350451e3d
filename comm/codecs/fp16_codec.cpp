#include "comm/codecs/fp16_codec.h"

#include "kernels/cpu/low_precision.h"

namespace ranklab {

Fp16Codec::Fp16Codec() : HalfFloatCodec(kernels::floatToFp16, kernels::fp16ToFloat) {}

}  // namespace ranklab
