#include "engine/train/zero_sync.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "comm/steady_clock.h"

namespace ranklab {

ZeroSync::ZeroSync(Communicator& comm, int stage) : comm_(comm), stage_(stage), ring_(comm) {
  if (stage < 1 || stage > 3) {
    throw std::invalid_argument("parallel.zero = " + std::to_string(stage) +
                                ": ZeroSync shards stages 1, 2 and 3");
  }
}

ModelBuffers ZeroSync::placeModel(const float* params, size_t count) {
  // Stage 3 keeps its chunk of the initial (or resumed) parameters; the model drops the rest.
  if (stage_ == 3) {
    const ParamRange own = updateRange(count);
    shard_params_.assign(params + own.begin, params + own.end);
  }
  return {};
}

void ZeroSync::start(float* /*params*/, size_t count) {
  count_ = count;
  own_ = updateRange(count);
  if (stage_ >= 2) shard_grads_.assign(own_.end - own_.begin, 0.f);
  for (Held& held : held_) held.gathered = false;
}

ModelBuffers ZeroSync::holdLayer(size_t offset, size_t count) {
  if (stage_ < 2) return {};
  Held& held = held_.emplace_back(Held{offset, count, {}, std::vector<float>(count, 0.f)});
  if (stage_ == 3) held.params.assign(count, 0.f);
  return {stage_ == 3 ? held.params.data() : nullptr, held.grads.data()};
}

ZeroSync::Held* ZeroSync::heldAt(size_t offset, size_t count) {
  for (Held& held : held_)
    if (held.offset == offset && held.count == count) return &held;
  return nullptr;
}

ParamRange ZeroSync::updateRange(size_t count) const {
  const Chunk own = ring_.ownedChunk(count);
  return {own.begin, own.begin + own.len};
}

float* ZeroSync::shardGradients(float* grads) {
  return stage_ >= 2 ? shard_grads_.data() : grads + own_.begin;
}

float* ZeroSync::gradientScratch(size_t largest_layer) {
  if (stage_ < 2) return nullptr;
  scratch_.assign(largest_layer, 0.f);
  return scratch_.data();
}

float* ZeroSync::parameterScratch(size_t largest_layer) {
  if (stage_ < 3) return nullptr;
  param_scratch_.assign(largest_layer, 0.f);
  return param_scratch_.data();
}

float* ZeroSync::shardParameters() {
  return stage_ == 3 ? shard_params_.data() : nullptr;
}

size_t ZeroSync::gradientBytesHeld() const {
  return shard_grads_.size() * sizeof(float);
}

size_t ZeroSync::parameterBytesHeld() const {
  return shard_params_.size() * sizeof(float);
}

size_t ZeroSync::bufferBytesHeld() const {
  size_t floats = scratch_.size() + param_scratch_.size();
  for (const Held& held : held_) floats += held.params.size() + held.grads.size();
  return floats * sizeof(float);
}

void ZeroSync::startStep() {
  for (Held& held : held_) held.reduced = false;
  pending_ = {};
  step_started_ = false;
  in_backward_ = false;
}

void ZeroSync::beginStep(double /*lr*/) {
  in_backward_ = true;
}

void ZeroSync::waitForPeersOnce() {
  if (step_started_) return;
  step_started_ = true;
  const int64_t t0 = steadyNowNs();
  comm_.barrier();  // separates waiting for a slow peer from moving bytes
  const int64_t waited = steadyNowNs() - t0;
  pending_.wait_ns += waited;
  (in_backward_ ? pending_.inside_backward_ns : pending_.inside_forward_ns) += waited;
}

void ZeroSync::countRing(SyncStats& stats) const {
  stats.bytes_tx += ring_.bytesSent();
  stats.bytes_raw += ring_.bytesSent();
  stats.bytes_rx += ring_.bytesReceived();
}

void ZeroSync::countLayerCollective(int64_t start_ns, bool inside_pass) {
  const int64_t took = steadyNowNs() - start_ns;
  pending_.comm_ns += took;
  if (inside_pass)
    (in_backward_ ? pending_.inside_backward_ns : pending_.inside_forward_ns) += took;
  countRing(pending_);
}

void ZeroSync::gatherWindow(float* window, size_t offset, size_t count) {
  waitForPeersOnce();
  const int64_t t0 = steadyNowNs();
  // This rank's part of the layer from its chunk, then everyone's.
  const size_t begin = std::max(offset, own_.begin), end = std::min(offset + count, own_.end);
  for (size_t i = begin; i < end; ++i) window[i - offset] = shard_params_[i - own_.begin];
  ring_.allGatherWindow(window, offset, count, count_);
  if (comm_.size() > 1) ++pending_.all_gathers;
  countLayerCollective(t0);
}

void ZeroSync::gatherParameters(size_t offset, size_t count) {
  if (Held* held = heldAt(offset, count)) {
    // Gathered once a step: every rank's pass asks the same layers, so all skip together.
    if (!held->gathered) gatherWindow(held->params.data(), offset, count);
    held->gathered = true;
    return;
  }
  if (count > param_scratch_.size()) {
    throw std::logic_error("ZeRO 3: a layer of " + std::to_string(count) +
                           " parameters in a scratch of " + std::to_string(param_scratch_.size()));
  }
  gatherWindow(param_scratch_.data(), offset, count);
}

void ZeroSync::wholeParameters(float* into, size_t count) {
  std::copy(shard_params_.begin(), shard_params_.end(), into + own_.begin);
  ring_.allGather(into, count);
}

void ZeroSync::reduceWindow(float* window, size_t offset, size_t count, bool inside_pass) {
  waitForPeersOnce();
  const int64_t t0 = steadyNowNs();
  ring_.reduceScatterWindow(window, offset, count, count_);
  // The owned part of this layer: the mean, into the shard.
  const size_t begin = std::max(offset, own_.begin), end = std::min(offset + count, own_.end);
  const float scale = 1.f / static_cast<float>(comm_.size());
  for (size_t i = begin; i < end; ++i) shard_grads_[i - own_.begin] = window[i - offset] * scale;
  if (comm_.size() > 1) ++pending_.reduce_scatters;
  countLayerCollective(t0, inside_pass);
}

void ZeroSync::reduceHeldLayers() {
  for (Held& held : held_) {
    if (!held.reduced) reduceWindow(held.grads.data(), held.offset, held.count, false);
    held.reduced = true;
  }
}

void ZeroSync::gradientReady(float* /*grads*/, size_t offset, size_t count) {
  if (stage_ < 2 || heldAt(offset, count)) return;  // held: reduced after backward
  if (count > scratch_.size()) {
    throw std::logic_error("ZeRO " + std::to_string(stage_) + ": a layer of " +
                           std::to_string(count) + " gradients in a scratch of " +
                           std::to_string(scratch_.size()));
  }
  reduceWindow(scratch_.data(), offset, count, true);
}

SyncStats ZeroSync::sync(float* grads, size_t count) {
  SyncStats stats;
  if (stage_ >= 2) {
    // Every other layer was reduced during backward (gradientReady).
    reduceHeldLayers();
    stats = pending_;
    pending_ = {};
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
  // Stage 3 gathers each layer when it is needed; a held one's values are last step's now.
  for (Held& held : held_) held.gathered = false;
  if (comm_.size() == 1 || stage_ == 3) return stats;
  const int64_t t0 = steadyNowNs();
  ring_.allGather(params, count);
  stats.comm_ns = steadyNowNs() - t0;
  stats.all_gathers = 1;
  countRing(stats);
  return stats;
}

}  // namespace ranklab
