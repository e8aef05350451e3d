#include "comm/ps/shard_codecs.h"

#include <stdexcept>

#include "comm/codecs/bf16_codec.h"
#include "comm/codecs/codec_traits.h"
#include "comm/codecs/fp16_codec.h"
#include "comm/codecs/qsgd_codec.h"
#include "comm/ps/exact_delta_codec.h"

namespace ranklab {

std::string pullCodecName(const std::string& push_codec) {
  const std::string& reply = codecTraitsOf(push_codec).ps_reply;
  return reply.empty() ? "exact-delta" : reply;
}

std::unique_ptr<GradientCodec> makePullCodec(const CodecOptions& options) {
  const std::string name = pullCodecName(options.codec);
  if (name == "exact-delta") return std::make_unique<ExactDeltaCodec>();
  CodecOptions pull = options;
  pull.codec = name;
  auto codec = makeCodec(pull, 0);
  // The held copy remembers the error, so round to nearest (see GradientCodec).
  codec->roundToNearest(true);
  return codec;
}

void checkPsCodec(const CodecOptions& options) {
  if (!codecTraitsOf(options.codec).ps_reply.empty()) return;
  throw std::invalid_argument("compression.codec \"" + options.codec +
                              "\" needs every worker's P summed before Q can be computed (two "
                              "all-reduces per step), which one push and one pull per step "
                              "cannot do; with a parameter server use " +
                              codecsAServerTakes());
}

ShardPushEncoder::ShardPushEncoder(const CodecOptions& options, int worker)
    : codec_(makeCodec(options, worker)) {
  if (options.error_feedback) feedback_ = std::make_unique<ErrorFeedback>();
  if (options.local_momentum > 0.f)
    momentum_ = std::make_unique<MomentumCorrection>(options.local_momentum);
  // Under error feedback the residual remembers the rounding error (see GradientCodec).
  codec_->roundToNearest(options.error_feedback);
}

void ShardPushEncoder::encode(float* g, size_t n, std::vector<uint8_t>& payload) {
  if (momentum_) momentum_->accumulate(g, n);
  if (feedback_) feedback_->compensate(g, n);
  if (n == 0) {
    payload.clear();
    sent_.clear();
    return;
  }
  codec_->encode(g, n, payload);
  sent_.resize(n);
  codec_->decode(payload.data(), payload.size(), n, sent_.data(), DecodeMode::kAssign);
  if (feedback_) feedback_->update(g, sent_.data(), n);
  if (momentum_ && codec_->sparse()) momentum_->maskSent(sent_.data(), n);
}

WorkerChannel::WorkerChannel(const CodecOptions& options, int worker, const float* params, size_t n)
    : push_codec_(makeCodec(options, worker)),
      pull_codec_(makePullCodec(options)),
      held_(params, params + n),
      delta_(n) {}

void WorkerChannel::decodePush(const uint8_t* payload, size_t bytes, float* grads) {
  if (held_.empty()) return;
  push_codec_->followEncode(held_.size());
  push_codec_->decode(payload, bytes, held_.size(), grads, DecodeMode::kAssign);
}

void WorkerChannel::encodeDelta(const float* params, std::vector<uint8_t>& payload) {
  const size_t n = held_.size();
  if (n == 0) {
    payload.clear();
    return;
  }
  for (size_t i = 0; i < n; ++i) delta_[i] = params[i] - held_[i];
  pull_codec_->encode(delta_.data(), n, payload);
  // The very decode the worker runs, into the copy: both add the same floats.
  pull_codec_->decode(payload.data(), payload.size(), n, held_.data(), DecodeMode::kAdd);
}

void WorkerChannel::resetHeld(const float* params) {
  std::copy(params, params + held_.size(), held_.begin());
}

}  // namespace ranklab
