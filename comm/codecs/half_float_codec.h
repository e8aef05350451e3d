// Shared body of the two 16-bit float codecs (fp16_codec.h, bf16_codec.h): each element
// becomes one 16-bit pattern, rounded to nearest even. Wire format: n x u16, nothing else.
#pragma once

#include "comm/codecs/codec.h"

namespace ranklab {

class HalfFloatCodec : public GradientCodec {
 public:
  using Narrow = void (*)(const float*, uint16_t*, size_t);
  using Widen = void (*)(const uint16_t*, float*, size_t);

  CodecCollective collective() const override { return CodecCollective::kRing; }
  void encode(const float* x, size_t n, std::vector<uint8_t>& out) override;
  void decode(const uint8_t* payload, size_t bytes, size_t n, float* out, DecodeMode mode) override;
  size_t payloadBytes(size_t n) const override { return n * sizeof(uint16_t); }

 protected:
  HalfFloatCodec(Narrow narrow, Widen widen) : narrow_(narrow), widen_(widen) {}

 private:
  Narrow narrow_;
  Widen widen_;
};

}  // namespace ranklab
