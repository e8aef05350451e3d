#include "engine/train/device_encoder.h"

#include <cstring>
#include <stdexcept>

#include "comm/codecs/codec_traits.h"
#include "comm/codecs/qsgd_codec.h"
#include "comm/codecs/randomk_codec.h"
#include "comm/codecs/topk_codec.h"

namespace ranklab {

bool hasDeviceEncode(const std::string& codec) {
  for (const auto& t : codecTraits())
    if (t.name == codec) return t.device_encode != DeviceEncode::kNone;
  return false;
}

DeviceEncoder::DeviceEncoder(const CodecOptions& options, int rank, const ComputeDevice& device)
    : device_(device),
      options_(options),
      value_type_(options.half_values ? sparse::ValueType::kF16 : sparse::ValueType::kF32),
      encode_(codecTraitsOf(options.codec).device_encode) {
  if (encode_ == DeviceEncode::kNone)
    throw std::invalid_argument("DeviceEncoder: no device encode for codec \"" + options.codec +
                                "\"");
  codec_ = makeCodec(options, rank);
}

DeviceEncoder::~DeviceEncoder() = default;

void DeviceEncoder::start(size_t count) {
  started_ = true;
  count_ = count;
  if (options_.error_feedback) residual_ = device_.allocate(count);  // zeros
  if (options_.local_momentum > 0.f) velocity_ = device_.allocate(count);
  stepped_ = false;
}

// In the host's order (CompressedAllreduce::run and encodeOwn; ShardPushEncoder::encode).
void DeviceEncoder::encode(float* grads, size_t count, std::vector<uint8_t>& payload, float* sent) {
  if (!started_ || count != count_) start(count);
  if (count == 0) {  // an empty shard sends an empty payload
    payload.clear();
    return;
  }
  if (velocity_)
    device_.accumulateMomentum(velocity_->data(), grads, count, options_.local_momentum);
  if (residual_) device_.add(grads, residual_->data(), count);
  stepped_ = true;
  if (!codec_->sparse()) {  // dense: encoded, and its residual kept, on the device
    encodeDense(grads, count, residual_ ? residual_->data() : nullptr, payload);
    if (sent) codec_->decode(payload.data(), payload.size(), count, sent, DecodeMode::kAssign);
    return;
  }
  if (!sent) {  // the pick's decoded values are needed here: what was sent
    sent_scratch_.resize(count);
    sent = sent_scratch_.data();
  }
  pick(grads, count);
  if (encode_ == DeviceEncode::kRandomk) {  // its payload: the values, in index order
    payload.resize(values_.size() * sizeof(float));
    if (!values_.empty()) std::memcpy(payload.data(), values_.data(), payload.size());
  } else {
    sparse::encode(indices_.data(), values_.data(), indices_.size(), count, value_type_, payload);
  }
  // What was sent, as its peers will decode it (fp16 values rounded).
  codec_->decode(payload.data(), payload.size(), count, sent, DecodeMode::kAssign);
  rememberWhatWasSent(grads, count, sent);
}

void DeviceEncoder::pick(const float* grads, size_t count) {
  if (encode_ == DeviceEncode::kTopk) {
    device_.selectTopk(grads, count, topkKeptCount(options_.ratio, count), indices_, values_);
  } else if (encode_ == DeviceEncode::kThreshold) {
    device_.selectAtLeast(grads, count, static_cast<float>(options_.threshold), indices_, values_);
  } else {  // randomk: the step's indices, drawn alike by its peers
    auto& randomk = static_cast<RandomkCodec&>(*codec_);
    randomk.drawIndices(count);
    indices_ = randomk.indices();
    values_.resize(indices_.size());
    device_.gather(grads, indices_.data(), indices_.size(), values_.data());
  }
}

void DeviceEncoder::encodeDense(const float* grads, size_t count, float* residual,
                                std::vector<uint8_t>& payload) {
  const auto bucket = static_cast<size_t>(options_.bucket);
  if (encode_ == DeviceEncode::kSign) {
    device_.encodeSign(grads, count, bucket, payload, residual);
  } else if (encode_ == DeviceEncode::kQsgd) {
    // To nearest under error feedback, which keeps the error; else stochastically, from the
    // codec's own stream (moved past the draws the device takes).
    auto& qsgd = static_cast<QsgdCodec&>(*codec_);
    qsgd.roundToNearest(options_.error_feedback);
    device_.encodeQsgd(grads, count, options_.bits, bucket, qsgd.rounding(count), payload,
                       residual);
  } else {
    const bool bf16 = encode_ == DeviceEncode::kBf16;
    device_.encodeHalf(grads, count, bf16 ? kernels::Precision::kBf16 : kernels::Precision::kFp16,
                       payload, residual);
  }
}

void DeviceEncoder::rememberWhatWasSent(const float* grads, size_t count, const float* sent) {
  const size_t k = indices_.size();
  if (residual_) {
    // residual = compensated - sent: the compensated gradient where nothing was sent, the
    // rounding left over where something was.
    left_out_.resize(k);
    for (size_t j = 0; j < k; ++j) left_out_[j] = values_[j] - sent[indices_[j]];
    device_.copy(residual_->data(), grads, count);
    device_.scatter(residual_->data(), residual_->size(), indices_.data(), left_out_.data(), k);
  }
  if (velocity_) {  // momentum factor masking: what was sent starts anew
    sent_at_.clear();
    for (uint32_t i : indices_)
      if (sent[i] != 0.f) sent_at_.push_back(i);
    const std::vector<float> zeros(sent_at_.size(), 0.f);
    device_.scatter(velocity_->data(), velocity_->size(), sent_at_.data(), zeros.data(),
                    sent_at_.size());
  }
}

void saveDeviceBuffer(CodecState& state, const std::string& key, const DeviceMemory& device,
                      DeviceBuffer* buffer, size_t count, bool stepped) {
  if (!buffer) return;
  std::vector<float>& tensor = state.tensors[key];
  if (!stepped) return;
  tensor.resize(count);
  device.download(tensor.data(), buffer->data(), count);
}

bool restoreDeviceBuffer(const CodecState& state, const std::string& key,
                         const DeviceMemory& device, DeviceBuffer* buffer, size_t count) {
  if (!buffer) return false;
  if (state.tensor(key).empty()) {
    device.fill(buffer->data(), count, 0.f);
    return false;
  }
  device.upload(buffer->data(), state.tensor(key, count).data(), count);
  return true;
}

void DeviceEncoder::saveState(CodecState& state, const std::string& prefix) const {
  codec_->saveState(state, prefix);
  saveDeviceBuffer(state, "residual", device_, residual_.get(), count_, stepped_);
  saveDeviceBuffer(state, "velocity", device_, velocity_.get(), count_, stepped_);
}

void DeviceEncoder::restoreState(const CodecState& state, const std::string& prefix) {
  codec_->restoreState(state, prefix);
  const bool residual = restoreDeviceBuffer(state, "residual", device_, residual_.get(), count_);
  const bool velocity = restoreDeviceBuffer(state, "velocity", device_, velocity_.get(), count_);
  stepped_ = residual || velocity;
}

size_t DeviceEncoder::deviceFloats() const {
  return (residual_ ? count_ : 0) + (velocity_ ? count_ : 0);
}

}  // namespace ranklab
