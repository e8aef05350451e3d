#include "comm/collectives/shm_allreduce.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/collectives/chunks.h"
#include "comm/collectives/flag_wait.h"
#include "comm/collectives/sum_into.h"
#include "comm/steady_clock.h"

namespace ranklab {

ShmAllreduce::ShmAllreduce(Communicator& comm, size_t piece_floats, size_t latency_floats)
    : comm_(comm),
      rank_(comm.rank()),
      world_(comm.size()),
      piece_floats_(std::max<size_t>(piece_floats, 1)),
      latency_floats_(latency_floats),
      half_stride_((kCounterFloats + latency_floats + 15) / 16 * 16) {
  reserve(16);  // also tells whether the ranks share memory at all
  if (!slots_) {
    throw ranksNotOnOneHost(
        "the shared-memory all-reduce (parallel.algorithm \"shm\", and \"hierarchical\" inside "
        "a host)",
        world_);
  }
  if (world_ == 1) return;
  small_ = comm_.allocateSharedSlots(kLine + 2 * half_stride_);
  raiseFlag(meetingOf(rank_), 0);  // shared memory starts with whatever was there
  for (uint64_t half : {0, 1}) raiseFlag(counterOf(rank_, half), 0);
  small_->fence();
}

const char* ShmAllreduce::pathFor(size_t count) const {
  return world_ > 1 && count <= latency_floats_ ? "flags" : "chunked";
}

std::invalid_argument ranksNotOnOneHost(const std::string& what, int world) {
  return std::invalid_argument(what + " needs its " + std::to_string(world) +
                               " ranks on one host, but they do not all share memory; across "
                               "hosts use parallel.algorithm ring, mpi or hierarchical (with "
                               "hosts from the machine split)");
}

void ShmAllreduce::reserve(size_t floats) {
  if (slots_ && floats <= capacity_) return;
  // Collective like the allocation (every rank runs the same sizes); the fence keeps the
  // old slots until every rank has copied its last result out.
  if (slots_) slots_->fence();
  slots_.reset();
  slots_ = comm_.allocateSharedSlots(2 * floats);
  capacity_ = floats;
  half_ = 0;
}

void ShmAllreduce::run(float* data, size_t count, float scale) {
  bytes_ = 0;
  wait_ = {};
  if (count == 0) return;
  if (world_ == 1) {
    if (scale != 1.f) std::transform(data, data + count, data, [&](float x) { return x * scale; });
    return;
  }
  if (count <= latency_floats_) return runOnFlags(data, count, scale);
  reserve(std::min(count, piece_floats_));
  for (size_t done = 0; done < count; done += piece_floats_)
    runPiece(data + done, std::min(piece_floats_, count - done), scale, done == 0);
}

void ShmAllreduce::runPiece(float* data, size_t count, float scale, bool first) {
  const size_t offset = static_cast<size_t>(half_) * capacity_;
  half_ ^= 1;
  auto at = [&](int rank, size_t i) { return slots_->slot(rank) + offset + i; };
  // In: everything but this rank's own chunk, which it reads from `data` itself.
  const Chunk mine = evenChunk(count, world_, rank_);
  std::memcpy(at(rank_, 0), data, mine.begin * sizeof(float));
  const size_t tail = mine.begin + mine.len;
  std::memcpy(at(rank_, tail), data + tail, (count - tail) * sizeof(float));
  const int64_t arrived = steadyNowNs();
  meet();  // every slot holds its rank's piece
  if (first) wait_ = {arrived, steadyNowNs()};

  // Reduce this rank's chunk over all slots into its own slot.
  inputs_.resize(world_);
  for (int s = 0; s < world_; ++s) inputs_[s] = s == rank_ ? data + mine.begin : at(s, mine.begin);
  sumInOrder(at(rank_, mine.begin), inputs_.data(), world_, mine.len, scale);
  meet();  // every chunk is summed

  // Out: chunk c from slot c. The next piece writes the other half, so no barrier is
  // needed before it; the one after that waits behind the next piece's first meeting.
  for (int c = 0; c < world_; ++c) {
    const Chunk piece = evenChunk(count, world_, c);
    std::memcpy(data + piece.begin, at(c, piece.begin), piece.len * sizeof(float));
  }
  countBytes(count);
}

void ShmAllreduce::meet() {
  const uint64_t meeting = ++meetings_;
  raiseFlag(meetingOf(rank_), meeting);
  for (int s = 0; s < world_; ++s)
    if (s != rank_) waitForFlag(meetingOf(s), meeting);
}

// Call k writes half k % 2: a rank writes that half again at call k + 2 only after every
// rank's other half reached k + 1, which each raised only after call k's reads. A buffer
// of up to 14 floats travels in its counter's cache line: one line moves, not two.
void ShmAllreduce::runOnFlags(float* data, size_t count, float scale) {
  const uint64_t call = ++calls_;
  std::memcpy(smallDataOf(rank_, call), data, count * sizeof(float));
  raiseFlag(counterOf(rank_, call), call);
  // The clock is read only when a peer is not there yet (two reads cost as much as the
  // rest of a 4-byte call).
  wait_ = {};
  for (int s = 0; s < world_; ++s) {
    if (s == rank_ || readFlag(counterOf(s, call)) >= call) continue;
    if (wait_.begin_ns == 0) wait_.begin_ns = steadyNowNs();
    waitForFlag(counterOf(s, call), call);
  }
  if (wait_.begin_ns != 0) wait_.end_ns = steadyNowNs();
  inputs_.resize(world_);
  for (int s = 0; s < world_; ++s) inputs_[s] = s == rank_ ? data : smallDataOf(s, call);
  sumInOrder(data, inputs_.data(), world_, count, scale);
  countBytes(count);
}

// What the chunked path reads from other ranks' slots (the latency path reads more, n - 1
// buffers, but counts the same volume, as mpi's counts the ring's: one formula per algorithm).
void ShmAllreduce::countBytes(size_t count) {
  const size_t mine = evenChunk(count, world_, rank_).len;
  const size_t others = count + static_cast<size_t>(world_ - 2) * mine;
  bytes_ += static_cast<int64_t>(others * sizeof(float));
}

}  // namespace ranklab
