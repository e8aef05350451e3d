#include "engine/train/zero_sync.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "comm/steady_clock.h"
#include "engine/model/compute_device.h"

namespace ranklab {

ZeroSync::ZeroSync(int stage, std::unique_ptr<GradientTransport> transport)
    : stage_(stage),
      collectives_(std::move(transport)),
      comm_(collectives_->group()),
      memory_(collectives_->memory()) {
  if (stage < 1 || stage > 3) {
    throw std::invalid_argument("parallel.zero = " + std::to_string(stage) +
                                ": ZeroSync shards stages 1, 2 and 3");
  }
}

ZeroSync::Buffer ZeroSync::allocate(size_t floats) const {
  return memory_.allocate(std::max<size_t>(floats, 1));
}

ModelBuffers ZeroSync::placeModel(const float* params, size_t count) {
  if (stage_ == 3) {
    // Keeps its chunk of the initial (or resumed) parameters; the model drops the rest.
    const ParamRange own = updateRange(count);
    shard_params_ = allocate(own.end - own.begin);
    memory_.copy(shard_params_->data(), params + own.begin, own.end - own.begin);
    return {};
  }
  const size_t padded = collectives_->paddedCount(count);
  if (stage_ == 2 || padded == count) return {};
  // Stage 1 on whole chunks: both collectives run in place on the model's own buffers.
  padded_params_ = allocate(padded);
  memory_.copy(padded_params_->data(), params, count);
  padded_grads_ = allocate(padded);
  return {padded_params_->data(), padded_grads_->data()};
}

void ZeroSync::start(float* /*params*/, size_t count) {
  count_ = count;
  own_ = updateRange(count);
  if (stage_ >= 2) shard_grads_ = allocate(own_.end - own_.begin);
  for (Held& held : held_) held.gathered = false;
}

ModelBuffers ZeroSync::holdLayer(size_t offset, size_t count) {
  if (stage_ < 2) return {};
  Held& held = held_.emplace_back(Held{offset, count, nullptr, allocate(count)});
  if (stage_ == 3) held.params = allocate(count);
  return {dataOf(held.params), held.grads->data()};
}

ZeroSync::Held* ZeroSync::heldAt(size_t offset, size_t count) {
  for (Held& held : held_)
    if (held.offset == offset && held.count == count) return &held;
  return nullptr;
}

ParamRange ZeroSync::updateRange(size_t count) const {
  const Chunk own = collectives_->owned(count);
  return {own.begin, own.begin + own.len};
}

float* ZeroSync::shardGradients(float* grads) {
  return stage_ >= 2 ? shard_grads_->data() : grads + own_.begin;
}

float* ZeroSync::gradientScratch(size_t largest_layer) {
  if (stage_ < 2) return nullptr;
  scratch_ = allocate(largest_layer);
  return scratch_->data();
}

float* ZeroSync::parameterScratch(size_t largest_layer) {
  if (stage_ < 3) return nullptr;
  param_scratch_ = allocate(largest_layer);
  return param_scratch_->data();
}

float* ZeroSync::shardParameters() {
  return stage_ == 3 ? shard_params_->data() : nullptr;
}

size_t ZeroSync::gradientBytesHeld() const {
  return stage_ >= 2 ? (own_.end - own_.begin) * sizeof(float) : 0;
}

size_t ZeroSync::parameterBytesHeld() const {
  return stage_ == 3 ? (own_.end - own_.begin) * sizeof(float) : 0;
}

size_t ZeroSync::bufferBytesHeld() const {
  const auto floats = [](const Buffer& b) { return b ? b->size() : 0; };
  // Stage 1's padding of the two flat buffers, the one-layer scratches, the held layers.
  size_t held = padded_grads_ ? 2 * (padded_grads_->size() - count_) : 0;
  held += floats(scratch_) + floats(param_scratch_);
  for (const Held& h : held_) held += floats(h.params) + floats(h.grads);
  return held * sizeof(float) + collectives_->hostBytesHeld();  // and a staged transport's copies
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

void ZeroSync::countBytes(SyncStats& stats) const {
  stats.bytes_tx += collectives_->bytesSent();
  stats.bytes_raw += collectives_->bytesSent();
  stats.bytes_rx += collectives_->bytesReceived();
}

void ZeroSync::countLayerCollective(int64_t start_ns, bool inside_pass) {
  const int64_t took = steadyNowNs() - start_ns;
  pending_.comm_ns += took;
  if (inside_pass)
    (in_backward_ ? pending_.inside_backward_ns : pending_.inside_forward_ns) += took;
  countBytes(pending_);
}

void ZeroSync::gatherWindow(float* window, size_t offset, size_t count) {
  waitForPeersOnce();
  const int64_t t0 = steadyNowNs();
  collectives_->allGather(shard_params_->data(), window, offset, count, count_);
  if (comm_.size() > 1) ++pending_.all_gathers;
  countLayerCollective(t0);
}

void ZeroSync::gatherParameters(size_t offset, size_t count) {
  if (Held* held = heldAt(offset, count)) {
    // Gathered once a step: every rank's pass asks the same layers, so all skip together.
    if (!held->gathered) gatherWindow(held->params->data(), offset, count);
    held->gathered = true;
    return;
  }
  if (count > param_scratch_->size()) {
    throw std::logic_error("ZeRO 3: a layer of " + std::to_string(count) +
                           " parameters in a scratch of " + std::to_string(param_scratch_->size()));
  }
  gatherWindow(param_scratch_->data(), offset, count);
}

void ZeroSync::wholeParameters(float* into, size_t count) {
  const Buffer whole = allocate(count);
  collectives_->allGather(shard_params_->data(), whole->data(), 0, count, count);
  memory_.download(into, whole->data(), count);
}

void ZeroSync::reduceWindow(float* window, size_t offset, size_t count, bool inside_pass) {
  waitForPeersOnce();
  const int64_t t0 = steadyNowNs();
  collectives_->reduceScatterMean(window, offset, count, count_, shard_grads_->data());
  if (comm_.size() > 1) ++pending_.reduce_scatters;
  countLayerCollective(t0, inside_pass);
}

void ZeroSync::reduceHeldLayers() {
  for (Held& held : held_) {
    if (!held.reduced) reduceWindow(held.grads->data(), held.offset, held.count, false);
    held.reduced = true;
  }
}

void ZeroSync::gradientReady(float* /*grads*/, size_t offset, size_t count) {
  if (stage_ < 2 || heldAt(offset, count)) return;  // held: reduced after backward
  if (count > scratch_->size()) {
    throw std::logic_error("ZeRO " + std::to_string(stage_) + ": a layer of " +
                           std::to_string(count) + " gradients in a scratch of " +
                           std::to_string(scratch_->size()));
  }
  reduceWindow(scratch_->data(), offset, count, true);
}

SyncStats ZeroSync::sync(float* grads, size_t /*count*/) {
  SyncStats stats;
  if (stage_ >= 2) {
    // Every other layer was reduced during backward (gradientReady).
    reduceHeldLayers();
    std::swap(stats, pending_);
    return stats;
  }
  if (comm_.size() == 1) return stats;
  const int64_t t0 = steadyNowNs();
  comm_.barrier();  // separates waiting for a slow peer from moving bytes
  const int64_t t1 = steadyNowNs();
  collectives_->reduceScatterMean(grads, flatCount());
  stats.wait_ns = t1 - t0;
  stats.comm_ns = steadyNowNs() - t1;
  stats.reduce_scatters = 1;
  countBytes(stats);
  return stats;
}

SyncStats ZeroSync::afterUpdate(float* params, size_t /*count*/) {
  SyncStats stats;
  // Stage 3 gathers each layer when it is needed; a held one's values are last step's now.
  for (Held& held : held_) held.gathered = false;
  if (comm_.size() == 1 || stage_ == 3) return stats;
  const int64_t t0 = steadyNowNs();
  collectives_->allGather(params, flatCount());
  stats.comm_ns = steadyNowNs() - t0;
  stats.all_gathers = 1;
  countBytes(stats);
  return stats;
}

}  // namespace ranklab
