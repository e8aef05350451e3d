// A CPU strategy for a model whose buffers are on a GPU (parallel.device_collectives =
// "host"): each gradient slice is copied to host memory as backward finishes it, the
// wrapped GradientSync (any algorithm, codec or server) runs there, and what it leaves for
// the optimizer (the mean gradient, or new parameters a server sent) is copied back.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

class StagedSync : public GradientSync, public PieceUpdates {
 public:
  // inner_reads_device: the inner strategy reads the device's gradient itself (a parameter
  // server's pushes encoded on the device): it stays where it is, only parameters and
  // results cross here.
  StagedSync(std::unique_ptr<GradientSync> inner, const DeviceMemory& device,
             bool inner_reads_device = false);

  Communicator& peers() override { return inner_->peers(); }
  void start(float* params, size_t count) override;
  void startStep() override;
  void beginStep(double lr) override { inner_->beginStep(lr); }
  void gradientReady(float* grads, size_t offset, size_t count) override;
  SyncStats sync(float* grads, size_t count) override;
  bool updatesParameters() const override { return inner_->updatesParameters(); }
  // The inner strategy's piece-wise update, each piece uploaded first; its checkpointed
  // state as it is.
  PieceUpdates* pieceUpdates() override { return inner_->pieceUpdates() ? this : nullptr; }
  CheckpointState* checkpointState() override { return inner_->checkpointState(); }
  void setPieceUpdate(PieceUpdateFn update) override;
  void awaitParameters(size_t offset, size_t count) override {
    inner_->pieceUpdates()->awaitParameters(offset, count);
  }
  SyncStats settle() override { return inner_->pieceUpdates()->settle(); }
  SyncStats afterUpdate(float* params, size_t count) override;
  void refresh(float* params, size_t count) override;
  void finish() override { inner_->finish(); }
  void traceSpans(CommSpans* sink) override { inner_->traceSpans(sink); }
  // The host copies of the gradient and the parameters.
  size_t bufferBytesHeld() const override;

 private:
  // Copies the device's params into the host copy, lets `run` change them there, copies back.
  SyncStats throughHost(float* params, size_t count, const std::function<SyncStats(float*)>& run);

  std::unique_ptr<GradientSync> inner_;
  const DeviceMemory& device_;
  float* device_params_ = nullptr;  // the model's, as given to start()
  // The model's, as handed to gradientReady() and sync(); read by the inner's thread too.
  std::atomic<float*> device_grads_ = nullptr;
  std::vector<float> host_params_, host_grads_;
  bool inner_reads_device_;
  size_t staged_this_step_ = 0;  // gradient floats gradientReady() copied since startStep()
  std::atomic<int64_t> pieces_up_ns_ = 0;  // the pieces' copies back, on the inner's thread
};

}  // namespace ranklab
