// parallel.strategy = "allreduce" with a codec whose encode has a device path here
// (compression.codec = "topk", "threshold", "randomk", "sign"; "fp16", "bf16" and "qsgd" with
// error feedback or on one rank) on a GPU: this rank's encode runs where the gradient is
// (device_encoder.h), and only its payload crosses to the host, instead of the n floats a
// host-staged codec downloads. From there the step is the CPU's: the payloads are
// all-gathered over MPI and decoded in rank order (randomk's values summed by the job's
// all-reduce, the casts' and qsgd's by the compressed ring), and the mean goes back up, as
// the pairs it is made of where it is sparse. The payloads cross through the host's own
// exchange (comm/codecs/payload_exchange.h), so only where the encode runs differs from the
// CPU's compressed all-reduce. Bit for bit the CPU's codec (tests: engine.DeviceCodec*).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/codecs/payload_exchange.h"
#include "comm/collectives/allreduce.h"
#include "engine/model/compute_device.h"
#include "engine/train/device_encoder.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

class AllreduceChoice;

// Whether the codec's encode has a device path here, for a sync over `ranks`: topk,
// threshold, randomk, sign; fp16, bf16 and qsgd with error feedback or on one rank.
bool encodesOnDevice(const CodecOptions& codec, int ranks);

class DeviceCodecSync : public GradientSync, public CheckpointState {
 public:
  // algorithm: the float all-reduce that sums randomk's values. Throws
  // std::invalid_argument for a codec without a device path (encodesOnDevice).
  DeviceCodecSync(Communicator& comm, const AllreduceChoice& algorithm, const CodecOptions& codec,
                  const ComputeDevice& device);
  ~DeviceCodecSync() override;

  Communicator& peers() override { return comm_; }
  void start(float* params, size_t count) override;
  // grads: the device's; on return, the mean over ranks of what each sent.
  SyncStats sync(float* grads, size_t count) override;
  // The codec's own ("codec."), "residual" and "velocity" (downloaded; empty before the
  // first step), as the host's compressed all-reduce keeps them.
  CheckpointState* checkpointState() override { return this; }
  CodecState saveCodecState() const override;
  void restoreCodecState(const CodecState& state) override;
  // The residual and velocity on the device, and the host's sum of the decoded payloads.
  size_t bufferBytesHeld() const override;

 private:
  // sum_ into the device's gradient: the elements that are not +0 as (index, value) pairs
  // scattered over zeros (a few ranks' picks), or the whole when that is cheaper.
  void uploadMean(float* grads, size_t count);

  Communicator& comm_;
  const ComputeDevice& device_;
  DeviceEncoder encoder_;                      // this rank's encode, on the device
  std::unique_ptr<PayloadExchange> exchange_;  // the payloads' collective, as on the host
  size_t count_ = 0;
  std::vector<uint32_t> touched_;   // where the mean is not +0
  std::vector<float> mean_values_;  // and what it is there
  std::vector<uint8_t> payload_;
  std::vector<float> sum_;  // host: this rank's sent values, the decoded payloads' sum, the mean
};

}  // namespace ranklab
