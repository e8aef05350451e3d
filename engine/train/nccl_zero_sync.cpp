#include "engine/train/nccl_zero_sync.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "comm/steady_clock.h"

namespace ranklab {

NcclZeroSync::NcclZeroSync(Communicator& peers, int stage, const ComputeDevice& device, int gpu)
    : peers_(peers),
      stage_(stage),
      device_(device),
      nccl_(peers, gpu),
      reduce_scatter_(nccl_),
      all_gather_(nccl_) {
  if (stage < 1 || stage > 3) {
    throw std::invalid_argument("parallel.zero = " + std::to_string(stage) +
                                ": NcclZeroSync shards stages 1, 2 and 3");
  }
}

size_t NcclZeroSync::chunkOf(size_t count) const {
  const auto n = static_cast<size_t>(peers_.size());
  return (count + n - 1) / n;
}

ParamRange NcclZeroSync::updateRange(size_t count) const {
  const size_t chunk = chunkOf(count), r = static_cast<size_t>(peers_.rank());
  return {std::min(r * chunk, count), std::min((r + 1) * chunk, count)};
}

float* NcclZeroSync::deviceBuffer(std::unique_ptr<DeviceBuffer>& buffer, size_t floats) {
  buffer = device_.allocate(std::max<size_t>(floats, 1));  // a rank past the end owns nothing
  device_.fill(buffer->data(), buffer->size(), 0.f);
  return buffer->data();
}

ModelBuffers NcclZeroSync::placeModel(const float* params, size_t count) {
  const ParamRange own = updateRange(count);
  if (stage_ == 3) {
    // Keeps its chunk of the initial (or resumed) parameters; the model drops the rest.
    float* shard = deviceBuffer(shard_params_, own.end - own.begin);
    device_.copy(shard, params + own.begin, own.end - own.begin);
    return {};
  }
  if (stage_ == 2) return {};
  // Stage 1: whole chunks, so both collectives run in place on the model's own buffers.
  const size_t padded = chunkOf(count) * static_cast<size_t>(peers_.size());
  float* placed = deviceBuffer(padded_params_, padded);
  device_.copy(placed, params, count);
  return {placed, deviceBuffer(padded_grads_, padded)};
}

void NcclZeroSync::start(float* /*params*/, size_t count) {
  count_ = count;
  chunk_ = chunkOf(count);
  own_ = updateRange(count);
  if (stage_ >= 2) deviceBuffer(shard_grads_, own_.end - own_.begin);
}

float* NcclZeroSync::shardGradients(float* grads) {
  return stage_ >= 2 ? shard_grads_->data() : grads + own_.begin;
}

float* NcclZeroSync::gradientScratch(size_t largest_layer) {
  return stage_ < 2 ? nullptr : deviceBuffer(scratch_, largest_layer);
}

float* NcclZeroSync::parameterScratch(size_t largest_layer) {
  return stage_ < 3 ? nullptr : deviceBuffer(param_scratch_, largest_layer);
}

float* NcclZeroSync::shardParameters() {
  return stage_ == 3 ? shard_params_->data() : nullptr;
}

size_t NcclZeroSync::gradientBytesHeld() const {
  return stage_ >= 2 ? (own_.end - own_.begin) * sizeof(float) : 0;
}

size_t NcclZeroSync::parameterBytesHeld() const {
  return stage_ == 3 ? (own_.end - own_.begin) * sizeof(float) : 0;
}

size_t NcclZeroSync::bufferBytesHeld() const {
  const auto floats = [](const std::unique_ptr<DeviceBuffer>& b) { return b ? b->size() : 0; };
  // Stage 1's padding of the two flat buffers, stages 2 and 3's one-layer scratches.
  const size_t padding = padded_grads_ ? 2 * (padded_grads_->size() - count_) : 0;
  return (padding + floats(scratch_) + floats(param_scratch_)) * sizeof(float);
}

void NcclZeroSync::startStep() {
  pending_ = {};
  in_backward_ = false;
}

std::vector<NcclZeroSync::Span> NcclZeroSync::spansOf(size_t offset, size_t count) const {
  std::vector<Span> spans;
  for (int q = 0; q < peers_.size(); ++q) {
    const size_t chunk_begin = q * chunk_, chunk_end = std::min(chunk_begin + chunk_, count_);
    const size_t begin = std::max(offset, chunk_begin), end = std::min(offset + count, chunk_end);
    if (begin < end) spans.push_back({q, begin, end});
  }
  return spans;
}

void NcclZeroSync::countBytes(SyncStats& stats, size_t floats) const {
  const int n = peers_.size();
  const auto bytes = static_cast<int64_t>(floats * sizeof(float)) * (n - 1) / n;
  stats.bytes_tx += bytes;
  stats.bytes_rx += bytes;
  stats.bytes_raw += bytes;
}

void NcclZeroSync::countLayerCollective(int64_t start_ns, size_t floats,
                                        int64_t SyncStats::*counter) {
  const int64_t took = steadyNowNs() - start_ns;
  pending_.comm_ns += took;
  (in_backward_ ? pending_.inside_backward_ns : pending_.inside_forward_ns) += took;
  if (peers_.size() == 1) return;  // one rank's pieces are copies, as ZeroSync counts them
  ++(pending_.*counter);
  countBytes(pending_, floats);
}

void NcclZeroSync::gradientReady(float* /*grads*/, size_t offset, size_t count) {
  if (stage_ < 2) return;
  if (count > scratch_->size()) {
    throw std::logic_error("ZeRO " + std::to_string(stage_) + " on a GPU: a layer of " +
                           std::to_string(count) + " gradients in a scratch of " +
                           std::to_string(scratch_->size()));
  }
  const int64_t t0 = steadyNowNs();
  // The layer's gradients (at offset in the flat index) to the owners of its chunks, as means.
  std::vector<NcclPiece> pieces;
  for (const Span& s : spansOf(offset, count)) {
    float* own = s.owner == peers_.rank() ? shard_grads_->data() + (s.begin - own_.begin) : nullptr;
    pieces.push_back({s.owner, scratch_->data() + (s.begin - offset), own, s.end - s.begin});
  }
  reduce_scatter_.run(pieces, /*mean=*/true);
  countLayerCollective(t0, count, &SyncStats::reduce_scatters);
}

void NcclZeroSync::gatherFromShards(float* into, size_t offset, size_t count) {
  std::vector<NcclPiece> pieces;
  for (const Span& s : spansOf(offset, count)) {
    const float* own =
        s.owner == peers_.rank() ? shard_params_->data() + (s.begin - own_.begin) : nullptr;
    pieces.push_back({s.owner, own, into + (s.begin - offset), s.end - s.begin});
  }
  all_gather_.run(pieces);
}

ModelBuffers NcclZeroSync::holdLayer(size_t offset, size_t count) {
  throw std::logic_error("ZeRO " + std::to_string(stage_) +
                         " on a GPU holds no layer for the step (" + std::to_string(count) +
                         " parameters at " + std::to_string(offset) +
                         "): a layer used outside its turn trains on the CPU");
}

void NcclZeroSync::gatherParameters(size_t offset, size_t count) {
  if (count > param_scratch_->size()) {
    throw std::logic_error("ZeRO 3 on a GPU: a layer of " + std::to_string(count) +
                           " parameters in a scratch of " + std::to_string(param_scratch_->size()));
  }
  const int64_t t0 = steadyNowNs();
  gatherFromShards(param_scratch_->data(), offset, count);
  countLayerCollective(t0, count, &SyncStats::all_gathers);
}

void NcclZeroSync::wholeParameters(float* into, size_t count) {
  std::unique_ptr<DeviceBuffer> whole;
  float* gathered = deviceBuffer(whole, count);
  gatherFromShards(gathered, 0, count);
  device_.download(into, gathered, count);
}

SyncStats NcclZeroSync::sync(float* grads, size_t /*count*/) {
  SyncStats stats;
  if (stage_ >= 2) {
    // Every layer was reduced during backward (gradientReady); nothing is left to move.
    std::swap(stats, pending_);
    return stats;
  }
  if (peers_.size() == 1) return stats;
  if (grads != padded_grads_->data())
    throw std::logic_error("ZeRO 1 on a GPU: the gradients are not in the padded buffer");
  const int64_t t0 = steadyNowNs();
  reduce_scatter_.run(grads, grads + peers_.rank() * chunk_, chunk_, /*mean=*/true);
  stats.comm_ns = steadyNowNs() - t0;
  stats.reduce_scatters = 1;
  countBytes(stats, chunk_ * peers_.size());
  return stats;
}

SyncStats NcclZeroSync::afterUpdate(float* params, size_t count) {
  SyncStats stats;
  // Stage 3 gathers each layer when it is needed.
  if (peers_.size() == 1 || stage_ == 3) return stats;
  const int64_t t0 = steadyNowNs();
  if (stage_ == 1) {
    all_gather_.run(params + peers_.rank() * chunk_, params, chunk_);
  } else {
    // Stage 2's flat parameters are not padded: every owner broadcasts its chunk in place.
    std::vector<NcclPiece> pieces;
    for (const Span& s : spansOf(0, count))
      pieces.push_back({s.owner, params + s.begin, params + s.begin, s.end - s.begin});
    all_gather_.run(pieces);
  }
  stats.comm_ns = steadyNowNs() - t0;
  stats.all_gathers = 1;
  countBytes(stats, chunk_ * peers_.size());
  return stats;
}

}  // namespace ranklab
