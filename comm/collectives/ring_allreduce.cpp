#include "comm/collectives/ring_allreduce.h"

#include <algorithm>

namespace ranklab {

RingAllreduce::RingAllreduce(Communicator& comm, size_t segment_floats)
    : comm_(comm),
      rank_(comm.rank()),
      world_(comm.size()),
      right_((comm.rank() + 1) % comm.size()),
      left_((comm.rank() + comm.size() - 1) % comm.size()),
      segment_floats_(std::max<size_t>(segment_floats, 1)) {}

size_t RingAllreduce::chunkBegin(size_t count, int chunk) const {
  // The first count % world chunks take one extra float.
  const size_t base = count / world_;
  const size_t extra = count % world_;
  const size_t c = static_cast<size_t>(chunk);
  return c * base + std::min(c, extra);
}

void RingAllreduce::exchange(const float* send, size_t send_count, float* recv, size_t recv_count) {
  comm_.sendRecv(send, send_count * sizeof(float), right_, recv, recv_count * sizeof(float), left_);
  bytes_sent_ += static_cast<int64_t>(send_count * sizeof(float));
  bytes_received_ += static_cast<int64_t>(recv_count * sizeof(float));
}

void RingAllreduce::run(float* data, size_t count) {
  bytes_sent_ = bytes_received_ = 0;
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
  // Chunk 0 is the longest; every rank loops over its segments so sends and receives pair up.
  const size_t longest = chunk(0).len;
  incoming_.resize(std::min(longest, segment_floats_));
  auto piece = [&](const Span& s, size_t off) {
    return off < s.len ? std::min(segment_floats_, s.len - off) : size_t{0};
  };

  // Reduce-scatter: step s sends chunk (rank - s) and adds the received chunk (rank - s - 1);
  // after n-1 steps this rank holds the complete sum of chunk (rank + 1).
  for (int s = 0; s < world_ - 1; ++s) {
    const Span out = chunk(rank_ - s);
    const Span in = chunk(rank_ - s - 1);
    for (size_t off = 0; off < longest; off += segment_floats_) {
      const size_t rn = piece(in, off);
      exchange(out.ptr + off, piece(out, off), incoming_.data(), rn);
      for (size_t i = 0; i < rn; ++i) in.ptr[off + i] += incoming_[i];
    }
  }

  // All-gather: step s forwards the complete chunk (rank + 1 - s) and receives (rank - s).
  for (int s = 0; s < world_ - 1; ++s) {
    const Span out = chunk(rank_ + 1 - s);
    const Span in = chunk(rank_ - s);
    for (size_t off = 0; off < longest; off += segment_floats_) {
      exchange(out.ptr + off, piece(out, off), in.ptr + off, piece(in, off));
    }
  }
}

}  // namespace ranklab
