// randomk codec (Stich et al. 2018): sends k = ceil(ratio * n) elements chosen uniformly at
// random without replacement. Every rank draws the same indices from (seed, step), so no
// index crosses the wire and payloads add elementwise: the ordinary float all-reduce sums
// them. Bound: the k chosen elements are exact, the others decode to 0.
// Wire format: k f32 values, in increasing index order (4k bytes).
// decode() reads payloads of the index set drawn by the last encode(): call encode once
// per step on every rank, then decode (or followEncode where a rank only decodes).
#pragma once

#include "comm/codecs/codec.h"

namespace ranklab {

class RandomkCodec : public GradientCodec {
 public:
  // seed: the same on every rank.
  RandomkCodec(double ratio, uint64_t seed);

  std::string name() const override { return "randomk"; }
  CodecCollective collective() const override { return CodecCollective::kSummed; }
  void encode(const float* x, size_t n, std::vector<uint8_t>& out) override;
  void decode(const uint8_t* payload, size_t bytes, size_t n, float* out, DecodeMode mode) override;
  void followEncode(size_t n) override { drawIndices(n); }
  bool sparse() const override { return true; }
  size_t payloadBytes(size_t n) const override { return keptCount(n) * sizeof(float); }
  // The shared stream's position: the next step draws from (seed, step).
  void saveState(CodecState& state, const std::string& prefix) const override {
    state.counters[prefix + "step"] = step_;
  }
  void restoreState(const CodecState& state, const std::string& prefix) override {
    step_ = state.counter(prefix + "step");
  }

  size_t keptCount(size_t n) const;
  // Draws the next step's sorted indices for n elements.
  void drawIndices(size_t n);
  // The sorted indices of the last encode().
  const std::vector<uint32_t>& indices() const { return indices_; }

 private:
  double ratio_;
  uint64_t seed_;
  uint64_t step_ = 0;
  size_t drawn_for_ = 0;  // n of the last encode()
  std::vector<uint32_t> indices_;
  std::vector<uint8_t> taken_;  // scratch for Floyd's sampling
};

}  // namespace ranklab
