#include "engine/train/zero_sync.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "comm/steady_clock.h"

namespace ranklab {

ZeroSync::ZeroSync(Communicator& comm, int stage) : comm_(comm), stage_(stage), ring_(comm) {
  if (stage != 1 && stage != 2) {
    throw std::invalid_argument("parallel.zero = " + std::to_string(stage) +
                                ": ZeroSync shards stages 1 and 2");
  }
}

void ZeroSync::start(float* /*params*/, size_t count) {
  count_ = count;
  own_ = updateRange(count);
  if (stage_ == 2) shard_grads_.assign(own_.end - own_.begin, 0.f);
}

ParamRange ZeroSync::updateRange(size_t count) const {
  const Chunk own = ring_.ownedChunk(count);
  return {own.begin, own.begin + own.len};
}

const float* ZeroSync::shardGradients(const float* grads) const {
  return stage_ == 2 ? shard_grads_.data() : grads + own_.begin;
}

float* ZeroSync::gradientScratch(size_t largest_layer) {
  if (stage_ != 2) return nullptr;
  scratch_.assign(largest_layer, 0.f);
  return scratch_.data();
}

size_t ZeroSync::gradientBytesHeld() const {
  return (scratch_.size() + shard_grads_.size()) * sizeof(float);
}

void ZeroSync::waitForPeersOnce() {
  if (step_started_) return;
  step_started_ = true;
  const int64_t t0 = steadyNowNs();
  comm_.barrier();  // separates waiting for a slow peer from moving bytes
  pending_.wait_ns += steadyNowNs() - t0;
}

void ZeroSync::countRing(SyncStats& stats) const {
  stats.bytes_tx += ring_.bytesSent();
  stats.bytes_raw += ring_.bytesSent();
  stats.bytes_rx += ring_.bytesReceived();
}

void ZeroSync::gradientReady(float* /*grads*/, size_t offset, size_t count) {
  if (stage_ != 2) return;
  if (count > scratch_.size()) {
    throw std::logic_error("ZeRO 2: a layer of " + std::to_string(count) +
                           " gradients in a scratch of " + std::to_string(scratch_.size()));
  }
  waitForPeersOnce();
  const int64_t t0 = steadyNowNs();
  ring_.reduceScatterWindow(scratch_.data(), offset, count, count_);
  // The owned part of this layer: the mean, into the shard.
  const size_t begin = std::max(offset, own_.begin), end = std::min(offset + count, own_.end);
  const float scale = 1.f / static_cast<float>(comm_.size());
  for (size_t i = begin; i < end; ++i) shard_grads_[i - own_.begin] = scratch_[i - offset] * scale;
  countRing(pending_);
  if (comm_.size() > 1) ++pending_.reduce_scatters;
  pending_.comm_ns += steadyNowNs() - t0;
}

SyncStats ZeroSync::sync(float* grads, size_t count) {
  SyncStats stats;
  if (stage_ == 2) {
    // Every layer was reduced during backward (gradientReady); nothing is left to move.
    stats = pending_;
    stats.inside_backward_ns = stats.wait_ns + stats.comm_ns;
    pending_ = {};
    step_started_ = false;
    return stats;
  }
  if (comm_.size() == 1) return stats;
  const int64_t t0 = steadyNowNs();
  comm_.barrier();  // separates waiting for a slow peer from moving bytes
  const int64_t t1 = steadyNowNs();
  ring_.reduceScatter(grads, count);
  const float scale = 1.f / static_cast<float>(comm_.size());
  for (size_t i = own_.begin; i < own_.end; ++i) grads[i] *= scale;
  stats.wait_ns = t1 - t0;
  stats.comm_ns = steadyNowNs() - t1;
  stats.reduce_scatters = 1;
  countRing(stats);
  return stats;
}

SyncStats ZeroSync::afterUpdate(float* params, size_t count) {
  SyncStats stats;
  if (comm_.size() == 1) return stats;
  const int64_t t0 = steadyNowNs();
  ring_.allGather(params, count);
  stats.comm_ns = steadyNowNs() - t0;
  stats.all_gathers = 1;
  countRing(stats);
  return stats;
}

}  // namespace ranklab
