// QSGD codec (Alistarh et al. 2017): stochastic k-bit quantization with one scale per
// bucket. Each element becomes a sign and a level l in 0..s, s = 2^(k-1) - 1 (k = 2: the
// levels -1, 0, 1), rounded up with probability equal to the remainder, so decoding is
// unbiased: E[decode(encode(x))] = x (to 2^-16 of a level: 16-bit random numbers). The scale is the
// bucket's largest |x| (max-norm: lower variance than the L2 norm at 2-4 bits). Bound:
// |decode(encode(x))_i - x_i| < scale(bucket of i) / s; half that when rounding to nearest
// (roundToNearest, used for a rank's own gradient under error feedback). Wire format:
// ceil(n/bucket) f32 scales, then n k-bit codes (sign << (k-1) | level), packed LSB-first:
// 4*ceil(n/bucket) + ceil(n*k/8) bytes.
#pragma once

#include "comm/codecs/codec.h"
#include "comm/codecs/fast_rng.h"
#include "kernels/cpu/qsgd_quantize.h"

namespace ranklab {

// The payload of x in the wire format above, from kernels/cpu/qsgd_quantize.h's scales and
// codes (left in `scales` and `codes`, from which a residual can be taken).
void qsgdEncode(const float* x, size_t n, int bits, size_t bucket, kernels::QsgdRounding rounding,
                std::vector<float>& scales, std::vector<uint32_t>& codes,
                std::vector<uint8_t>& out);

class QsgdCodec : public GradientCodec {
 public:
  // bits: 2..8; bucket >= 1; seed: this rank's rounding stream.
  QsgdCodec(int bits, int bucket, uint64_t seed);

  std::string name() const override { return "qsgd"; }
  CodecCollective collective() const override { return CodecCollective::kRing; }
  void encode(const float* x, size_t n, std::vector<uint8_t>& out) override;
  void decode(const uint8_t* payload, size_t bytes, size_t n, float* out, DecodeMode mode) override;
  size_t payloadBytes(size_t n) const override;
  void roundToNearest(bool nearest) override { nearest_ = nearest; }
  void saveState(CodecState& state, const std::string& prefix) const override {
    state.counters[prefix + "rng"] = rng_.position();
  }
  void restoreState(const CodecState& state, const std::string& prefix) override {
    rng_ = FastRng(state.counter(prefix + "rng"));
  }

  int levels() const { return levels_; }
  // How the next encode of n elements rounds: to nearest, or from this stream's next draws,
  // which it then moves past (an encode on a device draws them there).
  kernels::QsgdRounding rounding(size_t n);

 private:
  size_t buckets(size_t n) const { return (n + bucket_ - 1) / bucket_; }

  int bits_;
  size_t bucket_;
  int levels_;  // s
  bool nearest_ = false;
  FastRng rng_;
  std::vector<float> scales_;    // scratch, one scale per bucket
  std::vector<uint32_t> codes_;  // scratch, one code per element
};

}  // namespace ranklab
