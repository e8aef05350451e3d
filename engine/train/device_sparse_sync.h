// parallel.strategy = "allreduce" with a sparse codec (compression.codec = "topk" or
// "threshold") on a GPU: the codec runs where the gradient is, before anything leaves the
// device. Momentum correction's velocity and error feedback's residual live in device
// memory; the device folds them into the gradient (and clears the velocity of what was
// sent) and selects what the codec sends (the host codec's rule: kernels/cpu/sparse_select.h),
// and only those indices and values cross to the host, instead of the n floats a
// host-staged codec downloads. From there the step is the CPU's: the sparse payload is
// all-gathered over MPI, every rank decodes the payloads in rank order into a host sum, and
// the mean goes back up as the pairs it is made of. Bit for bit the CPU's codec (tests:
// engine.DeviceSparse.*).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/codecs/sparse_payload.h"
#include "comm/collectives/payload_allgather.h"
#include "engine/model/compute_device.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

// Whether the codec has a device path here (topk, threshold).
bool sparseOnDevice(const CodecOptions& codec);

class DeviceSparseSync : public GradientSync {
 public:
  // Throws std::invalid_argument for a codec other than topk and threshold.
  DeviceSparseSync(Communicator& comm, const CodecOptions& codec, const ComputeDevice& device);

  Communicator& peers() override { return comm_; }
  void start(float* params, size_t count) override;
  // grads: the device's; on return, the mean over ranks of what each sent.
  SyncStats sync(float* grads, size_t count) override;
  // "residual" and "velocity" (downloaded; empty before the first step), as the host
  // codec keeps them.
  CodecState saveCodecState() const override;
  void restoreCodecState(const CodecState& state) override;
  // The residual and velocity on the device, and the host's sum of the decoded payloads.
  size_t bufferBytesHeld() const override;

 private:
  // Momentum correction, error feedback and the selection on the device; payload_, the
  // residual and the velocity from them.
  void encodeOnDevice(float* grads, size_t count);
  // What this step's payload sent: error feedback keeps the rest, momentum correction
  // clears the velocity where something was sent.
  void rememberWhatWasSent(const float* grads, size_t count);
  // A payload of count_ elements into sum_.
  void decode(const std::vector<uint8_t>& payload, DecodeMode mode);
  // sum_ into the device's gradient: the elements that are not +0 as (index, value) pairs
  // scattered over zeros (a few ranks' k each), or the whole when that is cheaper.
  void uploadMean(float* grads, size_t count);

  Communicator& comm_;
  const ComputeDevice& device_;
  CodecOptions codec_;
  sparse::ValueType value_type_;
  bool error_feedback_;
  float momentum_;  // > 0: momentum correction
  PayloadAllgather allgather_;
  size_t count_ = 0;
  bool stepped_ = false;                    // residual and velocity hold a step's state
  std::unique_ptr<DeviceBuffer> residual_;  // null without error feedback
  std::unique_ptr<DeviceBuffer> velocity_;  // null without momentum correction
  std::vector<uint32_t> indices_;           // this step's selection
  std::vector<float> values_, left_out_;    // its values; what error feedback keeps of them
  std::vector<uint32_t> sent_at_;           // where a nonzero value was sent
  std::vector<uint32_t> touched_;           // where the mean is not +0
  std::vector<float> mean_values_;          // and what it is there
  std::vector<uint8_t> payload_;
  std::vector<std::vector<uint8_t>> gathered_;
  std::vector<float> sum_;  // host: the decoded payloads' sum, then the mean
};

}  // namespace ranklab
