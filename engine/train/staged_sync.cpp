#include "engine/train/staged_sync.h"

#include <stdexcept>

#include "comm/steady_clock.h"

namespace ranklab {

StagedSync::StagedSync(std::unique_ptr<GradientSync> inner, const DeviceMemory& device,
                       bool inner_reads_device)
    : inner_(std::move(inner)), device_(device), inner_reads_device_(inner_reads_device) {
  // Its result comes back as parameters: there is no host gradient to send up.
  if (inner_reads_device_ && !inner_->updatesParameters())
    throw std::logic_error(
        "StagedSync: an inner strategy that reads the device's gradient "
        "must update the parameters");
}

void StagedSync::start(float* params, size_t count) {
  host_params_.resize(count);
  if (!inner_reads_device_) host_grads_.resize(count);
  device_params_ = params;
  device_.download(host_params_.data(), params, count);
  // A server pulls into the parameters given here: the host copy, uploaded after sync().
  inner_->start(host_params_.data(), count);
  // A server's initial parameters, where it sent any, are the model's from here on.
  if (inner_->updatesParameters()) device_.upload(params, host_params_.data(), count);
}

void StagedSync::startStep() {
  staged_this_step_ = 0;
  inner_->startStep();
}

void StagedSync::setPieceUpdate(PieceUpdateFn update) {
  // Runs where the inner strategy reduces a piece (its thread): the piece's mean up into the
  // device's gradient, then the update of that piece on the device.
  inner_->pieceUpdates()->setPieceUpdate([this, update = std::move(update)](const float* grads,
                                                                            ParamRange piece,
                                                                            double lr, bool first) {
    const int64_t start = steadyNowNs();
    float* device_grads = device_grads_.load();
    device_.upload(device_grads + piece.begin, grads + piece.begin, piece.end - piece.begin);
    pieces_up_ns_ += steadyNowNs() - start;
    update(device_grads, piece, lr, first);
    // Queued on this thread's own stream: done before the piece is, since the forward that
    // waits for the piece queues its reads on the training thread's stream.
    device_.synchronize();
  });
}

void StagedSync::gradientReady(float* grads, size_t offset, size_t count) {
  device_grads_ = grads;
  if (inner_reads_device_) return;
  device_.download(host_grads_.data() + offset, grads + offset, count);
  staged_this_step_ += count;
  inner_->gradientReady(host_grads_.data(), offset, count);
}

SyncStats StagedSync::sync(float* grads, size_t count) {
  device_grads_ = grads;
  const int64_t start = steadyNowNs();
  // Without per-layer hand-overs (AMP, strategies that take none) the whole gradient now.
  if (!inner_reads_device_ && staged_this_step_ < count)
    device_.download(host_grads_.data(), grads, count);
  const int64_t copied = steadyNowNs();
  SyncStats stats = inner_->sync(inner_reads_device_ ? grads : host_grads_.data(), count);
  const int64_t back = steadyNowNs();
  // A server's new parameters, or the gradient every rank agrees on, back to the device;
  // pieces went up one by one as they were reduced.
  if (inner_->pieceUpdates())
    stats.comm_ns += pieces_up_ns_.exchange(0);
  else if (inner_->updatesParameters())
    device_.upload(device_params_, host_params_.data(), count);
  else
    device_.upload(grads, host_grads_.data(), count);
  // The copies are part of moving the gradient: comm time.
  stats.comm_ns += (copied - start) + (steadyNowNs() - back);
  return stats;
}

SyncStats StagedSync::afterUpdate(float* params, size_t count) {
  // Updated in pieces on the device, maybe still now, or a server's parameters, which went
  // up in sync() with no update here since: no host copy to bring back.
  if (inner_->updatesParameters()) return inner_->afterUpdate(host_params_.data(), count);
  return throughHost(params, count, [&](float* host) { return inner_->afterUpdate(host, count); });
}

void StagedSync::refresh(float* params, size_t count) {
  if (inner_->pieceUpdates()) return inner_->refresh(host_params_.data(), count);
  if (inner_->updatesParameters()) {  // the host copy is the device's: only the result goes up
    inner_->refresh(host_params_.data(), count);
    device_.upload(params, host_params_.data(), count);
    return;
  }
  throughHost(params, count, [&](float* host) {
    inner_->refresh(host, count);
    return SyncStats{};
  });
}

SyncStats StagedSync::throughHost(float* params, size_t count,
                                  const std::function<SyncStats(float*)>& run) {
  if (count != host_params_.size())
    throw std::logic_error("StagedSync: parameters of another size than at start()");
  const int64_t start = steadyNowNs();
  device_.download(host_params_.data(), params, count);
  const int64_t copied = steadyNowNs();
  SyncStats stats = run(host_params_.data());
  const int64_t back = steadyNowNs();
  device_.upload(params, host_params_.data(), count);
  stats.comm_ns += (copied - start) + (steadyNowNs() - back);
  return stats;
}

size_t StagedSync::bufferBytesHeld() const {
  return inner_->bufferBytesHeld() + (host_params_.size() + host_grads_.size()) * sizeof(float);
}

}  // namespace ranklab
