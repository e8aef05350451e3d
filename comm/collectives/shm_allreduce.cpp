#include "comm/collectives/shm_allreduce.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/collectives/chunks.h"
#include "comm/collectives/sum_into.h"
#include "comm/steady_clock.h"

namespace ranklab {

ShmAllreduce::ShmAllreduce(Communicator& comm, size_t piece_floats)
    : comm_(comm),
      rank_(comm.rank()),
      world_(comm.size()),
      piece_floats_(std::max<size_t>(piece_floats, 1)) {
  reserve(16);  // also tells whether the ranks share memory at all
  if (!slots_) {
    throw ranksNotOnOneHost(
        "the shared-memory all-reduce (parallel.algorithm \"shm\", and \"hierarchical\" inside "
        "a host)",
        world_);
  }
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
  slots_->fence();  // every slot holds its rank's piece
  if (first) wait_ = {arrived, steadyNowNs()};

  // Reduce this rank's chunk over all slots into its own slot.
  std::vector<const float*> inputs(world_);
  for (int s = 0; s < world_; ++s) inputs[s] = s == rank_ ? data + mine.begin : at(s, mine.begin);
  sumInOrder(at(rank_, mine.begin), inputs.data(), world_, mine.len, scale);
  slots_->fence();  // every chunk is summed

  // Out: chunk c from slot c. The next piece writes the other half, so no barrier is
  // needed before it; the one after that waits behind the next piece's first fence.
  for (int c = 0; c < world_; ++c) {
    const Chunk piece = evenChunk(count, world_, c);
    std::memcpy(data + piece.begin, at(c, piece.begin), piece.len * sizeof(float));
  }
  const size_t others = count + static_cast<size_t>(world_ - 2) * mine.len;
  bytes_ += static_cast<int64_t>(others * sizeof(float));
}

}  // namespace ranklab
