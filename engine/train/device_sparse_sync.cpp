#include "engine/train/device_sparse_sync.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "comm/codecs/topk_codec.h"
#include "comm/steady_clock.h"

namespace ranklab {

DeviceSparseSync::DeviceSparseSync(Communicator& comm, const CodecOptions& codec,
                                   const ComputeDevice& device)
    : comm_(comm),
      device_(device),
      codec_(codec),
      value_type_(codec.half_values ? sparse::ValueType::kF16 : sparse::ValueType::kF32),
      error_feedback_(codec.error_feedback),
      momentum_(codec.local_momentum),
      allgather_(comm),
      gathered_(comm.size()) {
  if (!sparseOnDevice(codec))
    throw std::invalid_argument("DeviceSparseSync: topk or threshold only (got \"" + codec.codec +
                                "\")");
}

bool sparseOnDevice(const CodecOptions& codec) {
  return codec.codec == "topk" || codec.codec == "threshold";
}

void DeviceSparseSync::decode(const std::vector<uint8_t>& payload, DecodeMode mode) {
  sparse::decode(payload.data(), payload.size(), count_, sum_.data(), mode, codec_.codec.c_str());
}

void DeviceSparseSync::start(float* /*params*/, size_t count) {
  count_ = count;
  sum_.assign(count, 0.f);
  if (error_feedback_) residual_ = device_.allocate(count);  // zeros
  if (momentum_ > 0.f) velocity_ = device_.allocate(count);
}

// In the host codec's order (CompressedAllreduce::run and encodeOwn).
void DeviceSparseSync::encodeOnDevice(float* grads, size_t count) {
  if (velocity_) device_.accumulateMomentum(velocity_->data(), grads, count, momentum_);
  if (residual_) device_.add(grads, residual_->data(), count);
  if (codec_.codec == "topk") {
    device_.selectTopk(grads, count, topkKeptCount(codec_.ratio, count), indices_, values_);
  } else {
    device_.selectAtLeast(grads, count, static_cast<float>(codec_.threshold), indices_, values_);
  }
  sparse::encode(indices_.data(), values_.data(), indices_.size(), count, value_type_, payload_);
  // What this rank sent, as every rank will decode it (fp16 values rounded).
  decode(payload_, DecodeMode::kAssign);
  rememberWhatWasSent(grads, count);
  stepped_ = true;
}

void DeviceSparseSync::rememberWhatWasSent(const float* grads, size_t count) {
  const size_t k = indices_.size();
  if (residual_) {
    // residual = compensated - sent: the compensated gradient where nothing was sent, the
    // rounding left over where something was.
    left_out_.resize(k);
    for (size_t j = 0; j < k; ++j) left_out_[j] = values_[j] - sum_[indices_[j]];
    device_.copy(residual_->data(), grads, count);
    device_.scatter(residual_->data(), indices_.data(), left_out_.data(), k);
  }
  if (velocity_) {  // momentum factor masking: what was sent starts its velocity anew
    sent_at_.clear();
    for (uint32_t i : indices_)
      if (sum_[i] != 0.f) sent_at_.push_back(i);
    const std::vector<float> zeros(sent_at_.size(), 0.f);
    device_.scatter(velocity_->data(), sent_at_.data(), zeros.data(), sent_at_.size());
  }
}

void DeviceSparseSync::uploadMean(float* grads, size_t count) {
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

SyncStats DeviceSparseSync::sync(float* grads, size_t count) {
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
    gathered_[comm_.rank()].swap(payload_);
    allgather_.run(gathered_);
    stats.bytes_tx = allgather_.bytesSent();
    stats.bytes_rx = allgather_.bytesReceived();
    stats.allreduces = 1;
    // Rank order on every rank, so every rank adds the same floats in the same order.
    const int64_t t = steadyNowNs();
    for (size_t r = 0; r < gathered_.size(); ++r)
      decode(gathered_[r], r == 0 ? DecodeMode::kAssign : DecodeMode::kAdd);
    stats.compress_ns += steadyNowNs() - t;
  }
  const float scale = 1.f / static_cast<float>(n);
  for (size_t i = 0; i < count; ++i) sum_[i] *= scale;
  uploadMean(grads, count);
  stats.wait_ns = t1 - t0;
  stats.comm_ns = steadyNowNs() - t1 - stats.compress_ns;
  return stats;
}

namespace {

// Under `key`: the buffer's count floats once a step ran, else an empty tensor.
void saveBuffer(CodecState& state, const std::string& key, const ComputeDevice& device,
                DeviceBuffer* buffer, size_t count, bool stepped) {
  if (!buffer) return;
  std::vector<float>& tensor = state.tensors[key];
  if (!stepped) return;
  tensor.resize(count);
  device.download(tensor.data(), buffer->data(), count);
}

// Whether a step's state came back. Throws std::invalid_argument naming the key when it is
// missing or of another size.
bool restoreBuffer(const CodecState& state, const std::string& key, const ComputeDevice& device,
                   DeviceBuffer* buffer, size_t count) {
  if (!buffer) return false;
  if (state.tensor(key).empty()) {
    device.fill(buffer->data(), count, 0.f);
    return false;
  }
  device.upload(buffer->data(), state.tensor(key, count).data(), count);
  return true;
}

}  // namespace

CodecState DeviceSparseSync::saveCodecState() const {
  CodecState state;
  saveBuffer(state, "residual", device_, residual_.get(), count_, stepped_);
  saveBuffer(state, "velocity", device_, velocity_.get(), count_, stepped_);
  return state;
}

void DeviceSparseSync::restoreCodecState(const CodecState& state) {
  const bool residual = restoreBuffer(state, "residual", device_, residual_.get(), count_);
  const bool velocity = restoreBuffer(state, "velocity", device_, velocity_.get(), count_);
  stepped_ = residual || velocity;
}

size_t DeviceSparseSync::bufferBytesHeld() const {
  return (sum_.size() + (residual_ ? count_ : 0) + (velocity_ ? count_ : 0)) * sizeof(float);
}

}  // namespace ranklab
