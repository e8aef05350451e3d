// Compressed push and pull for the parameter server (docs/compression.md, "Parameter
// server"). A push is one payload per shard of the job's codec, after momentum correction
// and error feedback kept per worker and shard, so per shard sent + residual = the sum of
// the raw gradients. A reply to a push is the change of the shard since the copy the
// worker holds, in the pull codec (pullCodecName); the server keeps that copy per worker
// and updates it with exactly the floats the worker adds, so both stay bit for bit equal
// and what a lossy pull left out goes with the next reply. A pull (before an evaluation)
// sends the parameters exactly and resets the copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/codecs/error_feedback.h"
#include "comm/codecs/momentum_correction.h"

namespace ranklab {

// The codec of the replies' parameter deltas for a push codec: fp16, bf16 and qsgd (to
// nearest) their own; sign fp16 (its updates are dense, and a 1-bit model would lag the
// server's far behind); topk, randomk and threshold exact-delta (exact_delta_codec.h).
std::string pullCodecName(const std::string& push_codec);
std::unique_ptr<GradientCodec> makePullCodec(const CodecOptions& options);

// Throws std::invalid_argument when the parameter server cannot carry options.codec
// (powersgd: its two all-reduces per step have no push/pull equivalent).
void checkPsCodec(const CodecOptions& options);

// Worker side, one per shard: the shard's slice of this worker's gradient into a payload.
class ShardPushEncoder {
 public:
  ShardPushEncoder(const CodecOptions& options, int worker);

  // g (n floats) gains the momentum and the residual in place, then becomes `payload`.
  void encode(float* g, size_t n, std::vector<uint8_t>& payload);
  // What the last payload decodes to.
  const std::vector<float>& sent() const { return sent_; }
  // Null when error feedback is off.
  const ErrorFeedback* errorFeedback() const { return feedback_.get(); }

 private:
  std::unique_ptr<GradientCodec> codec_;
  std::unique_ptr<ErrorFeedback> feedback_;
  std::unique_ptr<MomentumCorrection> momentum_;
  std::vector<float> sent_;
};

// Server side, one per worker: decodes its pushes, encodes its replies against the copy of
// the shard it holds.
class WorkerChannel {
 public:
  // params: the shard (n floats) as the worker holds it now.
  WorkerChannel(const CodecOptions& options, int worker, const float* params, size_t n);

  void decodePush(const uint8_t* payload, size_t bytes, float* grads);
  // payload = pull codec (params - held); held += decode(payload).
  void encodeDelta(const float* params, std::vector<uint8_t>& payload);
  // An exact reply went out: held = params.
  void resetHeld(const float* params);
  const float* held() const { return held_.data(); }

 private:
  std::unique_ptr<GradientCodec> push_codec_;
  std::unique_ptr<GradientCodec> pull_codec_;
  std::vector<float> held_;
  std::vector<float> delta_;
};

}  // namespace ranklab
