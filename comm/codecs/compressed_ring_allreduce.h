// Ring all-reduce (sum, in place) whose messages are codec payloads: the same schedule as
// RingAllreduce, but every chunk travels encoded. Reduce-scatter: each hop encodes the
// partial sum it forwards and the receiver decodes and adds, so a lossy codec adds its
// error once per hop. All-gather: the owner of a finished chunk encodes it once, keeps
// decode(payload) itself, and the same bytes travel on, so every rank ends bit-identical.
// For codecs with a fixed payload size per element count (CodecCollective::kRing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/communicator.h"

namespace ranklab {

class CompressedRingAllreduce {
 public:
  // codec: payloadBytes(n) must be exact (a kRing codec).
  CompressedRingAllreduce(Communicator& comm, GradientCodec& codec);

  void run(float* data, size_t count);

  // Bytes this rank sent / received in the last run().
  int64_t bytesSent() const { return bytes_sent_; }
  int64_t bytesReceived() const { return bytes_received_; }
  // Time spent in encode and decode during the last run(), ns.
  int64_t codecNs() const { return codec_ns_; }

 private:
  size_t chunkBegin(size_t count, int chunk) const;
  void encode(const float* x, size_t n, std::vector<uint8_t>& out);
  void decode(const std::vector<uint8_t>& payload, size_t n, float* out, DecodeMode mode);
  void exchange(size_t recv_bytes);

  Communicator& comm_;
  GradientCodec& codec_;
  int rank_;
  int world_;
  int right_;
  int left_;
  std::vector<uint8_t> outgoing_;
  std::vector<uint8_t> incoming_;
  int64_t bytes_sent_ = 0;
  int64_t bytes_received_ = 0;
  int64_t codec_ns_ = 0;
};

}  // namespace ranklab
