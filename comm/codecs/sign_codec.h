// sign codec (1-bit SGD, Seide et al. 2014; EF-signSGD, Karimireddy et al. 2019): one bit
// per element, and one scale per bucket, the bucket's mean |x|, which is the scale that
// minimises ||x - scale * sign(x)||. Decodes to +-scale (x = 0 counts as +).
// Bound, per bucket of m elements: ||decode(encode(x)) - x||^2 = ||x||^2 - ||x||_1^2 / m.
// Wire format: ceil(n/bucket) f32 scales, then n sign bits (1 = negative), LSB-first:
// 4*ceil(n/bucket) + ceil(n/8) bytes. Signs of different ranks do not add, so payloads
// are all-gathered.
#pragma once

#include "comm/codecs/codec.h"

namespace ranklab {

class SignCodec : public GradientCodec {
 public:
  explicit SignCodec(int bucket);

  std::string name() const override { return "sign"; }
  CodecCollective collective() const override { return CodecCollective::kAllgather; }
  void encode(const float* x, size_t n, std::vector<uint8_t>& out) override;
  void decode(const uint8_t* payload, size_t bytes, size_t n, float* out, DecodeMode mode) override;
  size_t payloadBytes(size_t n) const override;

 private:
  size_t buckets(size_t n) const { return (n + bucket_ - 1) / bucket_; }

  size_t bucket_;
};

}  // namespace ranklab
