// One codec's encode of a gradient in device memory, as the host's encoder does it
// (CompressedAllreduce's own encode; comm/ps/shard_codecs.h's ShardPushEncoder per shard):
// DGC's momentum correction and error feedback's residual kept in device memory and folded
// into the gradient, then the codec's pick or encode run on the device (topk's and
// threshold's selections: kernels/cpu/sparse_select.h; randomk's indices drawn on the host,
// as its peers draw them; sign's scales and bits: kernels/cpu/sign_pack.h; qsgd's scales and
// codes: kernels/cpu/qsgd_quantize.h, to nearest under error feedback, else from the codec's
// stream; the 16-bit casts), and only the payload copied to the host. What the payload
// decodes to comes back too: error feedback keeps the rest (on the device) and momentum
// correction clears the velocity where something was sent. Bit for bit the host's encoder.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/codecs/codec_traits.h"
#include "comm/codecs/sparse_payload.h"
#include "engine/model/compute_device.h"

namespace ranklab {

// Whether the codec's encode has a device path: every codec but powersgd (its products:
// powersgd_sync.h) and none.
bool hasDeviceEncode(const std::string& codec);

class DeviceEncoder {
 public:
  // rank: whose codec (makeCodec's seed: randomk's shared draws, qsgd's own stream). Throws
  // std::invalid_argument for a codec without a device encode.
  DeviceEncoder(const CodecOptions& options, int rank, const ComputeDevice& device);
  ~DeviceEncoder();

  // Device buffers for gradients of `count` floats (zeros); encode() makes them on first use
  // or for another count, restoreState() needs them.
  void start(size_t count);
  // grads: count floats of the device's, which gain the momentum and the residual in place.
  // payload: the codec's; sent (host, count floats; may be null): what it decodes to.
  void encode(float* grads, size_t count, std::vector<uint8_t>& payload, float* sent);
  // The host's codec: its payload format, decode and stream positions.
  GradientCodec& codec() { return *codec_; }

  // The codec's own (under `prefix`), "residual" and "velocity" (downloaded; empty before
  // the first step), as the host's compressed all-reduce keeps them.
  void saveState(CodecState& state, const std::string& prefix) const;
  void restoreState(const CodecState& state, const std::string& prefix);
  // Floats held in device memory: the residual and the velocity.
  size_t deviceFloats() const;

 private:
  // payload: sign's, qsgd's or a 16-bit cast's encode of grads; `residual` as the device's.
  void encodeDense(const float* grads, size_t count, float* residual,
                   std::vector<uint8_t>& payload);
  // indices_ and values_: what the codec sends of the device's gradient.
  void pick(const float* grads, size_t count);
  // Error feedback keeps what was not sent; momentum correction clears the velocity where
  // something was.
  void rememberWhatWasSent(const float* grads, size_t count, const float* sent);

  const ComputeDevice& device_;
  CodecOptions options_;
  std::unique_ptr<GradientCodec> codec_;
  sparse::ValueType value_type_;  // topk, threshold
  DeviceEncode encode_;           // which of the device's encodes, from the codec's traits
  size_t count_ = 0;
  bool started_ = false;
  bool stepped_ = false;                    // residual and velocity hold a step's state
  std::unique_ptr<DeviceBuffer> residual_;  // null without error feedback
  std::unique_ptr<DeviceBuffer> velocity_;  // null without momentum correction
  std::vector<uint32_t> indices_;           // this step's pick
  std::vector<float> values_, left_out_;    // its values; what error feedback keeps of them
  std::vector<uint32_t> sent_at_;           // where a nonzero value was sent
  std::vector<float> sent_scratch_;         // the decoded payload, when the caller wants none
};

// A device buffer (error feedback's residual, momentum correction's velocity) in a
// checkpoint, as the host's compressed all-reduce keeps it: under `key`, count floats
// downloaded once a step ran, else an empty tensor; nothing where `buffer` is null.
void saveDeviceBuffer(CodecState& state, const std::string& key, const DeviceMemory& device,
                      DeviceBuffer* buffer, size_t count, bool stepped);
// Back onto the device (zeros for an empty tensor); whether a step's state came back.
// Throws std::invalid_argument naming the key when it is missing or of another size.
bool restoreDeviceBuffer(const CodecState& state, const std::string& key,
                         const DeviceMemory& device, DeviceBuffer* buffer, size_t count);

}  // namespace ranklab
