#include "comm/codecs/bf16_codec.h"

#include "kernels/cpu/low_precision.h"

namespace ranklab {

Bf16Codec::Bf16Codec() : HalfFloatCodec(kernels::floatToBf16, kernels::bf16ToFloat) {}

}  // namespace ranklab
