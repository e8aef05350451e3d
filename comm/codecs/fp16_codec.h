// fp16 codec: IEEE half precision (F16C conversions). Bound: |decode(encode(x)) - x| <=
// 2^-11 |x| for 2^-14 <= |x| <= 65504, <= 2^-25 below; |x| >= 65520 becomes inf.
// Wire format: n x u16 (2 bytes per element, 2x smaller than fp32).
#pragma once

#include "comm/codecs/half_float_codec.h"

namespace ranklab {

class Fp16Codec : public HalfFloatCodec {
 public:
  Fp16Codec();
  std::string name() const override { return "fp16"; }
};

}  // namespace ranklab
