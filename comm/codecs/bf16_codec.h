// bf16 codec: the top 16 bits of fp32, rounded to nearest even (AVX-512 BF16 when the CPU
// has it). Keeps fp32's range, so it never overflows. Bound: |decode(encode(x)) - x| <=
// 2^-8 |x| for normal x. Wire format: n x u16 (2 bytes per element).
#pragma once

#include "comm/codecs/half_float_codec.h"

namespace ranklab {

class Bf16Codec : public HalfFloatCodec {
 public:
  Bf16Codec();
  std::string name() const override { return "bf16"; }
};

}  // namespace ranklab
