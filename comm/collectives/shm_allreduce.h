// Shared-memory all-reduce (sum, in place) for ranks on one host: each rank copies its
// buffer into its slot of a shared window, a barrier, rank r sums chunk r over all slots
// in slot order 0..n-1 (so every rank gets the same bits) into its own slot, a barrier,
// each rank copies the n summed chunks out. Each byte is copied once per direction,
// instead of twice through MPI's shared-memory FIFOs as the ring's messages are.
// Small buffers take a latency path instead: each rank copies its buffer into a slot,
// raises its flag, waits for every other rank's flag and sums the whole buffer itself, in
// the same slot order (the same bits as the chunked path), with no barrier at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/collectives/allreduce.h"
#include "comm/communicator.h"

namespace ranklab {

// The error for a shared-memory algorithm (`what` needs ...) whose `world` ranks do not all
// share one host, naming the algorithms that work across hosts.
std::invalid_argument ranksNotOnOneHost(const std::string& what, int world);

class ShmAllreduce {
 public:
  // Collective over `comm`. Throws std::invalid_argument when its ranks do not all share
  // one host. Buffers longer than piece_floats go through the slots piece by piece: 128 KiB
  // pieces keep a piece's slots and chunk in L2 (1 MiB in one piece ran 2x slower,
  // bench/LOG.md). Buffers of at most latency_floats take the latency path.
  explicit ShmAllreduce(Communicator& comm, size_t piece_floats = size_t{1} << 15,
                        size_t latency_floats = kLatencyFloats);

  // Below it one wait on flags costs less than the chunked path's two barriers (bench/LOG.md).
  static constexpr size_t kLatencyFloats = 4096;
  // "flags" (the latency path) or "chunked": what run() takes for `count` floats.
  const char* pathFor(size_t count) const;

  // The sum times `scale`: the rank that sums a chunk scales it once, in the same pass.
  void run(float* data, size_t count, float scale = 1.f);

  // What crossed between ranks in the last run(): bytes other ranks read from this rank's
  // slot / this rank read from theirs; 2(n-1)/n of the buffer each, as for the ring.
  int64_t bytesSent() const { return bytes_; }
  int64_t bytesReceived() const { return bytes_; }
  // The first barrier of the last run(): waiting until the slowest rank has copied in.
  SpanNs lastWait() const { return wait_; }

 private:
  void reserve(size_t floats);
  void runPiece(float* data, size_t count, float scale, bool first);
  void runOnFlags(float* data, size_t count, float scale);
  // Call k uses half k % 2 of each rank's slot: a counter (the last call that wrote it),
  // then the data, whose first 14 floats share the counter's cache line.
  float* halfOf(int rank, uint64_t call) {
    return small_->slot(rank) + kLine + (call % 2) * half_stride_;
  }
  // The chunked path's meetings: every rank raises its counter and waits for all others'
  // (a barrier on cache lines; two MPI barriers cost more than a 4-byte all-reduce).
  uint64_t* meetingOf(int rank) { return reinterpret_cast<uint64_t*>(small_->slot(rank)); }
  void meet();
  uint64_t* counterOf(int rank, uint64_t call) {
    return reinterpret_cast<uint64_t*>(halfOf(rank, call));
  }
  float* smallDataOf(int rank, uint64_t call) { return halfOf(rank, call) + kCounterFloats; }
  void countBytes(size_t count);

  Communicator& comm_;
  int rank_;
  int world_;
  size_t piece_floats_;
  std::unique_ptr<SharedSlots> slots_;  // each slot holds two halves of capacity_ floats
  size_t capacity_ = 0;
  int half_ = 0;  // the half the next piece uses: alternating halves spare a third barrier
  // The latency path's slots: two halves, each a counter and latency_floats_ of data.
  static constexpr size_t kCounterFloats = 2;
  static constexpr size_t kLine = 16;  // floats: the meeting counter's own cache line
  size_t latency_floats_;
  size_t half_stride_;  // floats, a whole number of cache lines
  std::unique_ptr<SharedSlots> small_;
  std::vector<const float*> inputs_;  // each slot's part of a sum, in slot order
  uint64_t calls_ = 0;
  uint64_t meetings_ = 0;
  int64_t bytes_ = 0;
  SpanNs wait_;
};

}  // namespace ranklab
