// topk codec (Aji & Heafield 2017; Stich et al. 2018): sends the k = ceil(ratio * n)
// elements of largest |x| exactly, as a sparse payload (sparse_payload.h); ties at the
// k-th magnitude go to the lower indices. NaN counts as larger than inf. Bound: kept elements are
// exact, the rest decode to 0, so |decode(encode(x))_i - x_i| <= the k-th largest |x|. Indices
// differ between ranks, so payloads are all-gathered.
#pragma once

#include "comm/codecs/codec.h"
#include "comm/codecs/sparse_payload.h"

namespace ranklab {

// k = ceil(ratio * n), at least 1 and at most n (0 for n = 0).
size_t topkKeptCount(double ratio, size_t n);

class TopkCodec : public GradientCodec {
 public:
  // half_values: send values as fp16 (2 bytes) instead of fp32.
  TopkCodec(double ratio, bool half_values = false);

  std::string name() const override { return "topk"; }
  CodecCollective collective() const override { return CodecCollective::kAllgather; }
  void encode(const float* x, size_t n, std::vector<uint8_t>& out) override;
  void decode(const uint8_t* payload, size_t bytes, size_t n, float* out, DecodeMode mode) override;
  bool sparse() const override { return true; }
  size_t payloadBytes(size_t) const override { return 0; }

  size_t keptCount(size_t n) const;

 private:
  double ratio_;
  std::vector<uint32_t> bucket_members_;  // scratch
  std::vector<uint32_t> indices_;
  std::vector<float> values_;
  sparse::ValueType values_type_;
};

}  // namespace ranklab
