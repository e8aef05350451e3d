#include "comm/codecs/compressed_ring_allreduce.h"

#include <algorithm>
#include <stdexcept>

#include "comm/steady_clock.h"

namespace ranklab {

CompressedRingAllreduce::CompressedRingAllreduce(Communicator& comm, GradientCodec& codec)
    : comm_(comm),
      codec_(codec),
      rank_(comm.rank()),
      world_(comm.size()),
      right_((comm.rank() + 1) % comm.size()),
      left_((comm.rank() + comm.size() - 1) % comm.size()) {
  if (codec.collective() != CodecCollective::kRing) {
    throw std::invalid_argument("CompressedRingAllreduce: codec " + codec.name() +
                                " has no fixed payload size; it cannot travel a ring");
  }
}

size_t CompressedRingAllreduce::chunkBegin(size_t count, int chunk) const {
  // The same split as RingAllreduce: the first count % world chunks take one extra float.
  const size_t base = count / world_;
  const size_t extra = count % world_;
  const size_t c = static_cast<size_t>(chunk);
  return c * base + std::min(c, extra);
}

void CompressedRingAllreduce::encode(const float* x, size_t n, std::vector<uint8_t>& out) {
  const int64_t t = steadyNowNs();
  codec_.encode(x, n, out);
  codec_ns_ += steadyNowNs() - t;
}

void CompressedRingAllreduce::decode(const std::vector<uint8_t>& payload, size_t n, float* out,
                                     DecodeMode mode) {
  const int64_t t = steadyNowNs();
  codec_.decode(payload.data(), payload.size(), n, out, mode);
  codec_ns_ += steadyNowNs() - t;
}

void CompressedRingAllreduce::exchange(size_t recv_bytes) {
  incoming_.resize(recv_bytes);
  comm_.sendRecv(outgoing_.data(), outgoing_.size(), right_, incoming_.data(), recv_bytes, left_);
  bytes_sent_ += static_cast<int64_t>(outgoing_.size());
  bytes_received_ += static_cast<int64_t>(recv_bytes);
}

void CompressedRingAllreduce::run(float* data, size_t count) {
  bytes_sent_ = bytes_received_ = codec_ns_ = 0;
  if (world_ == 1 || count == 0) return;
  struct Span {
    float* ptr;
    size_t len;
  };
  auto chunk = [&](int c) {
    c = ((c % world_) + world_) % world_;
    const size_t b = chunkBegin(count, c);
    return Span{data + b, chunkBegin(count, c + 1) - b};
  };

  // Reduce-scatter: step s sends chunk (rank - s) encoded and adds the decoded chunk
  // (rank - s - 1); after n-1 steps this rank holds the complete sum of chunk (rank + 1).
  for (int s = 0; s < world_ - 1; ++s) {
    const Span out = chunk(rank_ - s);
    const Span in = chunk(rank_ - s - 1);
    encode(out.ptr, out.len, outgoing_);
    exchange(codec_.payloadBytes(in.len));
    decode(incoming_, in.len, in.ptr, DecodeMode::kAdd);
  }

  // All-gather: encode the finished chunk once and keep its decoded value, so this rank
  // holds exactly what the others will; then forward payloads unchanged.
  const Span mine = chunk(rank_ + 1);
  encode(mine.ptr, mine.len, outgoing_);
  decode(outgoing_, mine.len, mine.ptr, DecodeMode::kAssign);
  for (int s = 0; s < world_ - 1; ++s) {
    const Span in = chunk(rank_ - s);
    exchange(codec_.payloadBytes(in.len));
    decode(incoming_, in.len, in.ptr, DecodeMode::kAssign);
    std::swap(outgoing_, incoming_);
  }
}

}  // namespace ranklab
