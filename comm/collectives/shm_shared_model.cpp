#include "comm/collectives/shm_shared_model.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/collectives/shm_allreduce.h"
#include "comm/collectives/sum_into.h"
#include "comm/steady_clock.h"

namespace ranklab {

Chunk lineAlignedChunk(size_t count, int parts, int c) {
  auto edge = [&](int k) {
    return std::min(count, (count * static_cast<size_t>(k) / parts + 15) / 16 * 16);
  };
  return {edge(c), edge(c + 1) - edge(c)};
}

ShmSharedModel::ShmSharedModel(Communicator& comm, size_t count)
    : rank_(comm.rank()),
      world_(comm.size()),
      count_(count),
      params_(comm.allocateSharedBlock(count)),
      grads_(comm.allocateSharedSlots(count)),
      own_(lineAlignedChunk(count, world_, rank_)) {
  if (!params_ || !grads_) {
    throw ranksNotOnOneHost(
        "parallel.algorithm \"shm-sharded\", which keeps the model once in shared memory,", world_);
  }
}

void ShmSharedModel::reduceOwnChunk(float scale) {
  const int64_t arrived = steadyNowNs();
  grads_->fence();  // every slot holds its rank's gradient
  wait_ = {arrived, steadyNowNs()};
  std::vector<const float*> inputs(world_);
  for (int s = 0; s < world_; ++s) inputs[s] = grads_->slot(s) + own_.begin;
  sumInOrder(grads() + own_.begin, inputs.data(), world_, own_.len, scale);
}

int64_t ShmSharedModel::bytesMoved() const {
  if (world_ == 1) return 0;
  const size_t floats = count_ + static_cast<size_t>(world_ - 2) * own_.len;
  return static_cast<int64_t>(floats * sizeof(float));
}

}  // namespace ranklab
