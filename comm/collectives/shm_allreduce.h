// Shared-memory all-reduce (sum, in place) for ranks on one host: each rank copies its
// buffer into its slot of a shared window, a barrier, rank r sums chunk r over all slots
// in slot order 0..n-1 (so every rank gets the same bits) into its own slot, a barrier,
// each rank copies the n summed chunks out. Each byte is copied once per direction,
// instead of twice through MPI's shared-memory FIFOs as the ring's messages are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

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
  // bench/LOG.md).
  explicit ShmAllreduce(Communicator& comm, size_t piece_floats = size_t{1} << 15);

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

  Communicator& comm_;
  int rank_;
  int world_;
  size_t piece_floats_;
  std::unique_ptr<SharedSlots> slots_;  // each slot holds two halves of capacity_ floats
  size_t capacity_ = 0;
  int half_ = 0;  // the half the next piece uses: alternating halves spare a third barrier
  int64_t bytes_ = 0;
  SpanNs wait_;
};

}  // namespace ranklab
