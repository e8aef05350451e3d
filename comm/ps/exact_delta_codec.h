// The pull codec of the sparse push codecs (topk, randomk, threshold): every nonzero
// element exactly, as a sparse payload with f32 values (comm/codecs/sparse_payload.h). With
// momentum correction a server's update touches only what the workers sent, so the change
// since a worker's last reply is sparse and travels without loss. Bound: exact. A dense
// change costs the bitmap, n/8 bytes, more than n f32 values.
#pragma once

#include "comm/codecs/codec.h"

namespace ranklab {

class ExactDeltaCodec : public GradientCodec {
 public:
  std::string name() const override { return "exact-delta"; }
  CodecCollective collective() const override { return CodecCollective::kAllgather; }
  void encode(const float* x, size_t n, std::vector<uint8_t>& out) override;
  void decode(const uint8_t* payload, size_t bytes, size_t n, float* out, DecodeMode mode) override;
  size_t payloadBytes(size_t /*n*/) const override { return 0; }
  bool sparse() const override { return true; }

 private:
  std::vector<uint32_t> indices_;
  std::vector<float> values_;
};

}  // namespace ranklab
