// parallel.strategy = "allreduce" with a codec whose encode has a device path here
// (compression.codec = "topk", "threshold", "randomk", "sign"; "fp16", "bf16" and "qsgd" with
// error feedback) on a GPU: this rank's encode runs where the gradient is, before anything leaves
// the device. Momentum correction's velocity and error feedback's residual live in device
// memory; the device folds them into the gradient (and clears the velocity of what was
// sent) and picks or encodes what the codec sends (topk's and threshold's selections:
// kernels/cpu/sparse_select.h; randomk's indices drawn on the host, as every rank draws
// them; sign's scales and bits: kernels/cpu/sign_pack.h; qsgd's scales and codes, rounded
// to nearest: kernels/cpu/qsgd_quantize.h; the 16-bit casts), and only that
// payload crosses to the host, instead of the n floats a host-staged codec downloads. From
// there the step is the CPU's: the payloads are all-gathered over MPI and decoded in rank
// order (randomk's values summed by the job's all-reduce, the casts' and qsgd's by the
// compressed ring), and the mean goes back up, as the pairs it is made of where it is sparse. Bit
// for bit the CPU's codec (tests: engine.DeviceCodec*).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/codecs/sparse_payload.h"
#include "comm/collectives/allreduce.h"
#include "comm/collectives/payload_allgather.h"
#include "engine/model/compute_device.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

class CompressedRingAllreduce;

// Whether the codec's encode has a device path here, for a sync over `ranks`: topk,
// threshold, randomk, sign; fp16, bf16 and qsgd with error feedback or on one rank.
bool encodesOnDevice(const CodecOptions& codec, int ranks);

// A codec's device buffer (error feedback's residual, momentum correction's velocity) in a
// checkpoint, as the host's compressed all-reduce keeps it: under `key`, count floats
// downloaded once a step ran, else an empty tensor; nothing where `buffer` is null.
void saveDeviceBuffer(CodecState& state, const std::string& key, const ComputeDevice& device,
                      DeviceBuffer* buffer, size_t count, bool stepped);
// Back onto the device (zeros for an empty tensor); whether a step's state came back.
// Throws std::invalid_argument naming the key when it is missing or of another size.
bool restoreDeviceBuffer(const CodecState& state, const std::string& key,
                         const ComputeDevice& device, DeviceBuffer* buffer, size_t count);

class DeviceCodecSync : public GradientSync {
 public:
  // algorithm: the float all-reduce that sums randomk's values. Throws
  // std::invalid_argument for a codec without a device path (encodesOnDevice).
  DeviceCodecSync(Communicator& comm, const std::string& algorithm, const CodecOptions& codec,
                  const ComputeDevice& device);
  ~DeviceCodecSync() override;

  Communicator& peers() override { return comm_; }
  void start(float* params, size_t count) override;
  // grads: the device's; on return, the mean over ranks of what each sent.
  SyncStats sync(float* grads, size_t count) override;
  // The codec's own ("codec."), "residual" and "velocity" (downloaded; empty before the
  // first step), as the host's compressed all-reduce keeps them.
  CodecState saveCodecState() const override;
  void restoreCodecState(const CodecState& state) override;
  // The residual and velocity on the device, and the host's sum of the decoded payloads.
  size_t bufferBytesHeld() const override;

 private:
  // Momentum correction, error feedback and the codec's pick on the device; payload_, the
  // residual and the velocity from them.
  void encodeOnDevice(float* grads, size_t count);
  // payload_: sign's, qsgd's or a 16-bit cast's encode of the device's gradient, and where
  // `residual` is not null, what error feedback keeps of it.
  void encodeDense(const float* grads, size_t count, float* residual);
  // indices_ and values_: what the codec sends of the device's gradient.
  void pick(const float* grads, size_t count);
  // What this step's payload sent: error feedback keeps the rest, momentum correction
  // clears the velocity where something was sent.
  void rememberWhatWasSent(const float* grads, size_t count);
  // The payloads of every rank into sum_, as the host's compressed all-reduce sums them.
  void combine(SyncStats& stats);
  // sum_ into the device's gradient: the elements that are not +0 as (index, value) pairs
  // scattered over zeros (a few ranks' picks), or the whole when that is cheaper.
  void uploadMean(float* grads, size_t count);

  Communicator& comm_;
  const ComputeDevice& device_;
  CodecOptions options_;
  std::unique_ptr<GradientCodec> codec_;           // the host's: payload format, decode, its state
  sparse::ValueType value_type_;                   // topk, threshold
  std::unique_ptr<Allreduce> allreduce_;           // randomk
  std::unique_ptr<CompressedRingAllreduce> ring_;  // fp16, bf16
  PayloadAllgather allgather_;                     // topk, threshold, sign
  size_t count_ = 0;
  bool stepped_ = false;                    // residual and velocity hold a step's state
  std::unique_ptr<DeviceBuffer> residual_;  // null without error feedback
  std::unique_ptr<DeviceBuffer> velocity_;  // null without momentum correction
  std::vector<uint32_t> indices_;           // this step's pick
  std::vector<float> values_, left_out_;    // its values; what error feedback keeps of them
  std::vector<uint32_t> sent_at_;           // where a nonzero value was sent
  std::vector<uint32_t> touched_;           // where the mean is not +0
  std::vector<float> mean_values_;          // and what it is there
  std::vector<uint8_t> payload_;
  std::vector<std::vector<uint8_t>> gathered_;
  std::vector<float> sum_;  // host: the decoded payloads' sum, then the mean
};

}  // namespace ranklab
