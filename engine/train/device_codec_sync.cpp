#include "engine/train/device_codec_sync.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "comm/codecs/qsgd_codec.h"
#include "comm/codecs/randomk_codec.h"
#include "comm/codecs/topk_codec.h"
#include "comm/collectives/allreduce_registry.h"
#include "comm/collectives/compressed_ring_allreduce.h"
#include "comm/steady_clock.h"

namespace ranklab {

bool encodesOnDevice(const CodecOptions& codec, int ranks) {
  // A ring codec (the 16-bit casts, qsgd) is encoded first, on the device, only where the
  // host would encode this rank's own gradient first too: else the ring encodes the raw
  // gradient's chunks itself.
  const bool ring = codec.codec == "fp16" || codec.codec == "bf16" || codec.codec == "qsgd";
  return codec.codec == "topk" || codec.codec == "threshold" || codec.codec == "randomk" ||
         codec.codec == "sign" || (ring && (codec.error_feedback || ranks == 1));
}

DeviceCodecSync::DeviceCodecSync(Communicator& comm, const std::string& algorithm,
                                 const CodecOptions& codec, const ComputeDevice& device)
    : comm_(comm),
      device_(device),
      options_(codec),
      value_type_(codec.half_values ? sparse::ValueType::kF16 : sparse::ValueType::kF32),
      allgather_(comm),
      gathered_(comm.size()) {
  if (!encodesOnDevice(codec, comm.size()))
    throw std::invalid_argument("DeviceCodecSync: no device path for codec \"" + codec.codec +
                                "\" here");
  codec_ = makeCodec(codec, comm.rank());
  if (codec.codec == "randomk") allreduce_ = makeAllreduce(algorithm, comm);
  if (codec_->collective() == CodecCollective::kRing)
    ring_ = std::make_unique<CompressedRingAllreduce>(comm, *codec_);
}

DeviceCodecSync::~DeviceCodecSync() = default;

void DeviceCodecSync::start(float* /*params*/, size_t count) {
  count_ = count;
  sum_.assign(count, 0.f);
  if (options_.error_feedback) residual_ = device_.allocate(count);  // zeros
  if (options_.local_momentum > 0.f) velocity_ = device_.allocate(count);
}

void DeviceCodecSync::pick(const float* grads, size_t count) {
  if (options_.codec == "topk") {
    device_.selectTopk(grads, count, topkKeptCount(options_.ratio, count), indices_, values_);
  } else if (options_.codec == "threshold") {
    device_.selectAtLeast(grads, count, static_cast<float>(options_.threshold), indices_, values_);
  } else {  // randomk: the step's indices, drawn alike on every rank
    auto& randomk = static_cast<RandomkCodec&>(*codec_);
    randomk.drawIndices(count);
    indices_ = randomk.indices();
    values_.resize(indices_.size());
    device_.gather(grads, indices_.data(), indices_.size(), values_.data());
  }
}

// In the host's order (CompressedAllreduce::run and encodeOwn).
void DeviceCodecSync::encodeOnDevice(float* grads, size_t count) {
  if (velocity_)
    device_.accumulateMomentum(velocity_->data(), grads, count, options_.local_momentum);
  if (residual_) device_.add(grads, residual_->data(), count);
  float* residual = residual_ ? residual_->data() : nullptr;
  if (!codec_->sparse()) {  // dense: encoded, and its residual kept, on the device
    encodeDense(grads, count, residual);
    codec_->decode(payload_.data(), payload_.size(), count, sum_.data(), DecodeMode::kAssign);
    stepped_ = true;
    return;
  }
  pick(grads, count);
  if (options_.codec == "randomk") {  // its payload: the values, in index order
    payload_.resize(values_.size() * sizeof(float));
    if (!values_.empty()) std::memcpy(payload_.data(), values_.data(), payload_.size());
  } else {
    sparse::encode(indices_.data(), values_.data(), indices_.size(), count, value_type_, payload_);
  }
  // What this rank sent, as every rank will decode it (fp16 values rounded).
  codec_->decode(payload_.data(), payload_.size(), count, sum_.data(), DecodeMode::kAssign);
  rememberWhatWasSent(grads, count);
  stepped_ = true;
}

void DeviceCodecSync::encodeDense(const float* grads, size_t count, float* residual) {
  const auto bucket = static_cast<size_t>(options_.bucket);
  if (options_.codec == "sign") {
    device_.encodeSign(grads, count, bucket, payload_, residual);
  } else if (options_.codec == "qsgd") {
    // As the host's ring: this rank's own gradient to nearest under error feedback, which
    // keeps the error; the partial sums after it stochastically, from the host's stream.
    auto& qsgd = static_cast<QsgdCodec&>(*codec_);
    qsgd.roundToNearest(options_.error_feedback);
    device_.encodeQsgd(grads, count, options_.bits, bucket, qsgd.rounding(count), payload_,
                       residual);
    qsgd.roundToNearest(false);
  } else {
    device_.encodeHalf(
        grads, count,
        options_.codec == "bf16" ? kernels::Precision::kBf16 : kernels::Precision::kFp16, payload_,
        residual);
  }
}

void DeviceCodecSync::rememberWhatWasSent(const float* grads, size_t count) {
  const size_t k = indices_.size();
  if (residual_) {
    // residual = compensated - sent: the compensated gradient where nothing was sent, the
    // rounding left over where something was.
    left_out_.resize(k);
    for (size_t j = 0; j < k; ++j) left_out_[j] = values_[j] - sum_[indices_[j]];
    device_.copy(residual_->data(), grads, count);
    device_.scatter(residual_->data(), indices_.data(), left_out_.data(), k);
  }
  if (velocity_ && codec_->sparse()) {  // momentum factor masking: what was sent starts anew
    sent_at_.clear();
    for (uint32_t i : indices_)
      if (sum_[i] != 0.f) sent_at_.push_back(i);
    const std::vector<float> zeros(sent_at_.size(), 0.f);
    device_.scatter(velocity_->data(), sent_at_.data(), zeros.data(), sent_at_.size());
  }
}

void DeviceCodecSync::combine(SyncStats& stats) {
  if (ring_) {  // fp16, bf16: the ring over what every rank sent, re-encoding partial sums
    ring_->run(sum_.data(), count_);
    stats.bytes_tx = ring_->bytesSent();
    stats.bytes_rx = ring_->bytesReceived();
    stats.compress_ns += ring_->codecNs();
    return;
  }
  if (allreduce_) {  // randomk: every rank's values at the same indices add up
    auto* values = reinterpret_cast<float*>(payload_.data());
    allreduce_->run(values, payload_.size() / sizeof(float));
    stats.bytes_tx = allreduce_->bytesSent();
    stats.bytes_rx = allreduce_->bytesReceived();
    const int64_t t = steadyNowNs();
    codec_->decode(payload_.data(), payload_.size(), count_, sum_.data(), DecodeMode::kAssign);
    stats.compress_ns += steadyNowNs() - t;
    return;
  }
  gathered_[comm_.rank()].swap(payload_);
  allgather_.run(gathered_);
  stats.bytes_tx = allgather_.bytesSent();
  stats.bytes_rx = allgather_.bytesReceived();
  // Rank order on every rank, so every rank adds the same floats in the same order.
  const int64_t t = steadyNowNs();
  for (size_t r = 0; r < gathered_.size(); ++r)
    codec_->decode(gathered_[r].data(), gathered_[r].size(), count_, sum_.data(),
                   r == 0 ? DecodeMode::kAssign : DecodeMode::kAdd);
  stats.compress_ns += steadyNowNs() - t;
}

void DeviceCodecSync::uploadMean(float* grads, size_t count) {
  if (!codec_->sparse()) {  // a dense codec's mean has a value everywhere
    device_.upload(grads, sum_.data(), count);
    return;
  }
  touched_.clear();
  mean_values_.clear();
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &sum_[i], sizeof bits);
    if (bits == 0) continue;  // +0, as the fill leaves it (a -0 goes up as it is)
    touched_.push_back(static_cast<uint32_t>(i));
    mean_values_.push_back(sum_[i]);
  }
  // A pair costs two floats: sparse only while that is cheaper than the whole.
  if (2 * touched_.size() >= count) {
    device_.upload(grads, sum_.data(), count);
    return;
  }
  device_.fill(grads, count, 0.f);
  device_.scatter(grads, touched_.data(), mean_values_.data(), touched_.size());
}

SyncStats DeviceCodecSync::sync(float* grads, size_t count) {
  if (count != count_) start(nullptr, count);
  SyncStats stats;
  const int n = comm_.size();
  const int64_t t0 = steadyNowNs();
  comm_.barrier();  // separates waiting for a slow peer from moving bytes
  const int64_t t1 = steadyNowNs();
  encodeOnDevice(grads, count);
  stats.compress_ns = steadyNowNs() - t1;
  if (n > 1) {
    stats.bytes_raw = static_cast<int64_t>(2.0 * (n - 1) / n * count * sizeof(float));
    stats.allreduces = 1;
    combine(stats);
  }
  const float scale = 1.f / static_cast<float>(n);
  for (size_t i = 0; i < count; ++i) sum_[i] *= scale;
  uploadMean(grads, count);
  stats.wait_ns = t1 - t0;
  stats.comm_ns = steadyNowNs() - t1 - stats.compress_ns;
  return stats;
}

void saveDeviceBuffer(CodecState& state, const std::string& key, const ComputeDevice& device,
                      DeviceBuffer* buffer, size_t count, bool stepped) {
  if (!buffer) return;
  std::vector<float>& tensor = state.tensors[key];
  if (!stepped) return;
  tensor.resize(count);
  device.download(tensor.data(), buffer->data(), count);
}

bool restoreDeviceBuffer(const CodecState& state, const std::string& key,
                         const ComputeDevice& device, DeviceBuffer* buffer, size_t count) {
  if (!buffer) return false;
  if (state.tensor(key).empty()) {
    device.fill(buffer->data(), count, 0.f);
    return false;
  }
  device.upload(buffer->data(), state.tensor(key, count).data(), count);
  return true;
}

CodecState DeviceCodecSync::saveCodecState() const {
  CodecState state;
  codec_->saveState(state, "codec.");
  saveDeviceBuffer(state, "residual", device_, residual_.get(), count_, stepped_);
  saveDeviceBuffer(state, "velocity", device_, velocity_.get(), count_, stepped_);
  return state;
}

void DeviceCodecSync::restoreCodecState(const CodecState& state) {
  codec_->restoreState(state, "codec.");
  const bool residual = restoreDeviceBuffer(state, "residual", device_, residual_.get(), count_);
  const bool velocity = restoreDeviceBuffer(state, "velocity", device_, velocity_.get(), count_);
  stepped_ = residual || velocity;
}

size_t DeviceCodecSync::bufferBytesHeld() const {
  return (sum_.size() + (residual_ ? count_ : 0) + (velocity_ ? count_ : 0)) * sizeof(float);
}

}  // namespace ranklab
