#include "engine/train/device_codec_sync.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "comm/codecs/codec_traits.h"
#include "comm/steady_clock.h"

namespace ranklab {

bool encodesOnDevice(const CodecOptions& codec, int ranks) {
  // A ring codec (the 16-bit casts, qsgd) is encoded first, on the device, only where the
  // host would encode this rank's own gradient first too: else the ring encodes the raw
  // gradient's chunks itself.
  const DeviceEncode encode = codecTraitsOf(codec.codec).device_encode;
  return encode != DeviceEncode::kNone &&
         (!reencodedOnTheRing(encode) || codec.error_feedback || ranks == 1);
}

DeviceCodecSync::DeviceCodecSync(Communicator& comm, const AllreduceChoice& algorithm,
                                 const CodecOptions& codec, const ComputeDevice& device)
    : comm_(comm), device_(device), encoder_(codec, comm.rank(), device) {
  if (!encodesOnDevice(codec, comm.size()))
    throw std::invalid_argument("DeviceCodecSync: no device path for codec \"" + codec.codec +
                                "\" here");
  exchange_ = std::make_unique<PayloadExchange>(comm, algorithm, encoder_.codec());
}

DeviceCodecSync::~DeviceCodecSync() = default;

void DeviceCodecSync::start(float* /*params*/, size_t count) {
  count_ = count;
  sum_.assign(count, 0.f);
  encoder_.start(count);
}

void DeviceCodecSync::uploadMean(float* grads, size_t count) {
  if (!encoder_.codec().sparse()) {  // a dense codec's mean has a value everywhere
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
  device_.scatter(grads, count, touched_.data(), mean_values_.data(), touched_.size());
}

SyncStats DeviceCodecSync::sync(float* grads, size_t count) {
  if (count != count_) start(nullptr, count);
  return timeCompressedAllreduce(comm_, count, [&](SyncStats& stats) {
    const int64_t t = steadyNowNs();
    encoder_.encode(grads, count, payload_, sum_.data());
    CompressedAllreduceStats exchanged;
    exchanged.codec_ns = steadyNowNs() - t;
    exchange_->sum(payload_, sum_.data(), count, exchanged);
    stats.bytes_tx = exchanged.bytes_tx;
    stats.bytes_rx = exchanged.bytes_rx;
    stats.compress_ns = exchanged.codec_ns;
    const float scale = 1.f / static_cast<float>(comm_.size());
    for (size_t i = 0; i < count; ++i) sum_[i] *= scale;
    uploadMean(grads, count);
  });
}

CodecState DeviceCodecSync::saveCodecState() const {
  CodecState state;
  encoder_.saveState(state, "codec.");
  return state;
}

void DeviceCodecSync::restoreCodecState(const CodecState& state) {
  encoder_.restoreState(state, "codec.");
}

size_t DeviceCodecSync::bufferBytesHeld() const {
  return (sum_.size() + encoder_.deviceFloats()) * sizeof(float);
}

}  // namespace ranklab
