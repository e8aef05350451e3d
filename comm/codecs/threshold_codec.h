// threshold codec (Strom 2015): sends every element with |x| >= threshold exactly, as a
// sparse payload (sparse_payload.h). How many that is depends on the gradient; with error
// feedback small elements accumulate until they cross the threshold.
// Bound: |decode(encode(x))_i - x_i| < threshold. Payloads are all-gathered.
#pragma once

#include "comm/codecs/codec.h"

namespace ranklab {

class ThresholdCodec : public GradientCodec {
 public:
  explicit ThresholdCodec(double threshold);

  std::string name() const override { return "threshold"; }
  CodecCollective collective() const override { return CodecCollective::kAllgather; }
  void encode(const float* x, size_t n, std::vector<uint8_t>& out) override;
  void decode(const uint8_t* payload, size_t bytes, size_t n, float* out, DecodeMode mode) override;
  size_t payloadBytes(size_t) const override { return 0; }

 private:
  float threshold_;
  std::vector<uint32_t> indices_;  // scratch
  std::vector<float> values_;
};

}  // namespace ranklab
