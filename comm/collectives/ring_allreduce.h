// Ring all-reduce (sum, in place): reduce-scatter around the ring, then all-gather.
// Each rank sends and receives 2(n-1)/n of the buffer, whatever n is. The two halves are
// also collectives of their own (ZeRO: gradients reduce-scattered, parameters all-gathered),
// and the reduce-scatter can run over a window of a larger buffer (one layer's gradients)
// with the chunks of the whole, so each rank sums the same elements in the same order.
// On a few ranks (at most kGatherWorld) shorter buffers skip the ring's 2(n-1) steps, and
// each chunk is still summed in the order the ring sums it (the same bits on every path):
// small ones are gathered whole in one exchange between every pair ("gather"); middling
// ones move each chunk straight to the rank that sums it and each sum straight to every
// rank, the ring's own bytes in two rounds ("pairwise").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/collectives/allreduce.h"
#include "comm/collectives/chunks.h"
#include "comm/communicator.h"

namespace ranklab {

class RingAllreduce {
 public:
  // segment_floats: the largest piece moved in one message, so a chunk streams: the next
  // piece is in flight while the current one is added.
  explicit RingAllreduce(Communicator& comm, size_t segment_floats = 1 << 16);

  void run(float* data, size_t count);

  // The gather path's bound: at most this many floats received from all peers together,
  // and at most kGatherWorld ranks (each rank sends n - 1 messages a round).
  static constexpr size_t kGatherFloats = size_t{1} << 14;
  static constexpr int kGatherWorld = 8;
  // The pairwise path's bound (more than 2 ranks: on 2 it is the ring itself).
  static constexpr size_t kPairwiseFloats = size_t{1} << 19;
  // "gather", "pairwise" or "ring": what run() takes for `count` floats.
  const char* pathFor(size_t count) const;

  // After it, ownedChunk(count) of data holds the sum over ranks; the rest is partial.
  void reduceScatter(float* data, size_t count) { reduceScatterWindow(data, 0, count, count); }
  // The same for elements [offset, offset + count) of a buffer of `total` floats, of which
  // `window` holds just those: afterwards ownedChunk(total)'s part of the window is summed.
  void reduceScatterWindow(float* window, size_t offset, size_t count, size_t total);
  // Every rank's owned chunk of data to every rank (after each updated its own).
  void allGather(float* data, size_t count) { allGatherWindow(data, 0, count, count); }
  // The same for elements [offset, offset + count) of a buffer of `total` floats, of which
  // `window` holds just those, this rank's part of ownedChunk(total) already in place.
  void allGatherWindow(float* window, size_t offset, size_t count, size_t total);
  // The chunk of `total` floats this rank holds summed after a reduce-scatter.
  Chunk ownedChunk(size_t total) const;

  // Bytes this rank sent / received in the last run().
  int64_t bytesSent() const { return bytes_sent_; }
  int64_t bytesReceived() const { return bytes_received_; }

  // Non-null: every later hop is appended here ("ring-rs" hops 0..n-2 of a reduce-scatter,
  // "ring-ag" hops n-1..2n-3 of an all-gather); null stops it.
  void traceInto(CommSpans* sink) { trace_ = sink; }

 private:
  struct Span {
    float* ptr;
    size_t len;
  };
  // Chunk c (mod world) of the window when total_ floats are split over the ring
  // (chunks.h): its part inside [offset_, offset_ + count), at data + (that - offset_).
  Span chunk(float* data, size_t count, int c) const;
  void setWindow(float* data, size_t offset, size_t count, size_t total);
  void reduceStep(const Span& out, const Span& in);
  void gatherStep(const Span& out, const Span& in);
  // Appends a hop that sent chunk c (mod world), `bytes` of it, from t0 until now.
  void traceHop(const char* kind, int part, int c, int64_t bytes, int64_t t0);
  void gatherThenSum(float* data, size_t count);
  void pairwise(float* data, size_t count);
  // The summed chunk c's inputs in the ring's order (rank c first, then c + 1, ...), where
  // rank s's piece of it sits at base + s * stride.
  void sumChunkInRingOrder(float* out, const float* base, size_t stride, int c, size_t len);

  Communicator& comm_;
  int rank_;
  int world_;
  int right_;
  int left_;
  size_t segment_floats_;
  size_t offset_ = 0, total_ = 0;   // the window during a call
  size_t longest_ = 0;              // floats in the window's longest chunk
  std::vector<float> incoming_[2];  // double buffer: one piece arriving, one being added
  std::vector<float> gathered_;     // gather, pairwise: every rank's buffer or piece, by rank
  std::vector<const float*> inputs_;
  int64_t bytes_sent_ = 0;
  int64_t bytes_received_ = 0;
  CommSpans* trace_ = nullptr;
};

}  // namespace ranklab
