// threshold codec (Strom 2015): sends every element with |x| >= threshold exactly, as a
// sparse payload (sparse_payload.h). How many that is depends on the gradient; with error
// feedback small elements accumulate until they cross the threshold.
// Bound: |decode(encode(x))_i - x_i| < threshold (sent ones: exact, or within fp16 rounding
// with fp16 values). Payloads are all-gathered.
#pragma once

#include "comm/codecs/codec.h"
#include "comm/codecs/sparse_payload.h"

namespace ranklab {

class ThresholdCodec : public GradientCodec {
 public:
  // half_values: send values as fp16 (2 bytes) instead of fp32.
  ThresholdCodec(double threshold, bool half_values = false);

  std::string name() const override { return "threshold"; }
  CodecCollective collective() const override { return CodecCollective::kAllgather; }
  void encode(const float* x, size_t n, std::vector<uint8_t>& out) override;
  void decode(const uint8_t* payload, size_t bytes, size_t n, float* out, DecodeMode mode) override;
  bool sparse() const override { return true; }
  size_t payloadBytes(size_t) const override { return 0; }

 private:
  float threshold_;
  std::vector<uint32_t> indices_;  // scratch
  std::vector<float> values_;
  sparse::ValueType values_type_;
};

}  // namespace ranklab
