#include "engine/train/shm_sharded_sync.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/train/model_average.h"

namespace ranklab {

ShmSharedModel& ShmShardedSync::shared(size_t count) const {
  // The trainer must have moved the model into the shared buffers first.
  if (!shared_ || shared_->ownChunk().begin + shared_->ownChunk().len > count) {
    throw std::logic_error("shm-sharded: placeModel() was not called for " + std::to_string(count) +
                           " parameters");
  }
  return *shared_;
}

ModelBuffers ShmShardedSync::placeModel(const float* params, size_t count) {
  shared_ = std::make_unique<ShmSharedModel>(comm_, count);
  // Every rank holds the same initial model; one copy is written.
  if (comm_.rank() == 0) std::copy(params, params + count, shared_->params());
  shared_->publish();
  return {shared_->params(), shared_->grads()};
}

ParamRange ShmShardedSync::updateRange(size_t count) const {
  const Chunk own = shared(count).ownChunk();
  return {own.begin, own.begin + own.len};
}

SyncStats ShmShardedSync::sync(float* grads, size_t count) {
  ShmSharedModel& model = shared(count);
  if (grads != model.grads()) throw std::logic_error("shm-sharded: gradients outside the slot");
  const int64_t t0 = steadyNowNs();
  model.reduceOwnChunk(1.f / static_cast<float>(comm_.size()));
  SyncStats stats;
  stats.wait_ns = model.lastWait().end_ns - model.lastWait().begin_ns;
  stats.comm_ns = steadyNowNs() - t0 - stats.wait_ns;
  stats.bytes_tx = stats.bytes_rx = stats.bytes_raw = model.bytesMoved();
  stats.reduce_scatters = 1;  // each rank sums its chunk over every slot
  return stats;
}

SyncStats ShmShardedSync::afterUpdate(float* /*params*/, size_t count) {
  const int64_t t0 = steadyNowNs();
  shared(count).publish();
  SyncStats stats;
  stats.wait_ns = steadyNowNs() - t0;
  return stats;
}

}  // namespace ranklab
