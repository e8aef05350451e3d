// parallel.strategy = "allreduce" with compression.codec = "powersgd" (Vogels et al. 2019;
// comm/codecs/powersgd.h keeps its layout, Q draws, orthonormalisation and state): the
// products of each step's power iteration run on the model's device (the CPU's kernels, or a
// GPU's cuBLAS), and only the small matrices cross ranks, through host buffers. Per step and
// weight matrix M (rows, cols) at rank r: error feedback's residual added to M; Q (cols, r)
// uploaded, P = M Q, P and the uncompressed rest (the biases) downloaded and summed over the
// ranks; P orthonormalised on the host and uploaded, Q = M^T P^, downloaded and summed; the
// residual M - P^ Q^T kept on the device; the mean P^ Q_sum^T / ranks computed there and the
// rest's mean uploaded. About 2 (rows + cols) r floats per matrix cross each way instead of
// rows * cols. One algorithm on every device: on the CPU the uploads and downloads are
// copies, and a device whose products are the CPU's is bit for bit the CPU (tests:
// engine.DevicePowerSgd*).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/codecs/powersgd.h"
#include "comm/collectives/allreduce.h"
#include "engine/model/compute_device.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

class AllreduceChoice;

class PowerSgdSync : public GradientSync, public CheckpointState {
 public:
  // codec: powersgd's options with the model's weight matrices. algorithm: the float
  // all-reduce that sums P, the rest and Q. device: where the model's gradient is.
  PowerSgdSync(Communicator& comm, const AllreduceChoice& algorithm, CodecOptions codec,
               const ComputeDevice& device);
  ~PowerSgdSync() override;

  Communicator& peers() override { return comm_; }
  void start(float* params, size_t count) override;
  // grads: the device's; on return, the mean over ranks of what each sent.
  SyncStats sync(float* grads, size_t count) override;
  // powersgd's own ("codec.": its step and warm-start Q) and "residual" (downloaded; empty
  // before the first step), the keys the other codecs' state uses.
  CheckpointState* checkpointState() override { return this; }
  CodecState saveCodecState() const override;
  void restoreCodecState(const CodecState& state) override;
  // The device's P, Q and residual, and the host's two summed buffers.
  size_t bufferBytesHeld() const override;

 private:
  // The first buffer: every P = M Q, then the rest.
  void projectP(const float* grads);
  // P orthonormalised; the second buffer: every Q = M^T P^; the residual.
  void projectQ(const float* grads);
  // residual = M - P^ Q^T per block, 0 over the rest (sent whole).
  void keepResidual(const float* grads);
  // grads = P^ Q_sum^T per block and the summed rest.
  void reconstruct(float* grads);
  void sum(std::vector<float>& buffer, SyncStats& stats);

  Communicator& comm_;
  const ComputeDevice& device_;
  CodecOptions options_;
  std::unique_ptr<Allreduce> allreduce_;
  std::unique_ptr<PowerSgd> powersgd_;
  size_t count_ = 0;
  bool stepped_ = false;                    // the residual holds a step's state
  std::unique_ptr<DeviceBuffer> p_, q_;     // every block's P and Q, laid out as the host's
  std::unique_ptr<DeviceBuffer> residual_;  // null without error feedback
};

}  // namespace ranklab
