#include "comm/codecs/compressed_allreduce.h"

#include <cstring>
#include <stdexcept>

#include "comm/codecs/codec_traits.h"
#include "comm/codecs/momentum_correction.h"
#include "comm/steady_clock.h"

namespace ranklab {

CompressedAllreduce::CompressedAllreduce(Communicator& comm, const AllreduceChoice& algorithm,
                                         const CodecOptions& options, size_t count)
    : comm_(comm), options_(options), count_(count) {
  if (!options.compresses()) {
    throw std::invalid_argument("CompressedAllreduce: codec none needs no compression");
  }
  if (codecTraitsOf(options.codec).form == CodecForm::kLowRank) {
    throw std::invalid_argument("CompressedAllreduce: codec \"" + options.codec +
                                "\" runs its products where the gradient is "
                                "(engine/train/powersgd_sync.h)");
  }
  codec_ = makeCodec(options, comm.rank());
  exchange_ = std::make_unique<PayloadExchange>(comm, algorithm, *codec_);
  if (options.error_feedback) feedback_ = std::make_unique<ErrorFeedback>();
  if (options.local_momentum > 0.f)
    momentum_ = std::make_unique<MomentumCorrection>(options.local_momentum);
}

CompressedAllreduce::~CompressedAllreduce() = default;

CodecState CompressedAllreduce::saveState() const {
  CodecState state;
  codec_->saveState(state, "codec.");
  if (feedback_) state.tensors["residual"] = feedback_->residual();
  if (momentum_) state.tensors["velocity"] = momentum_->velocity();
  return state;
}

namespace {
// A tensor of `count` floats, or empty (the run had not stepped yet).
std::vector<float> countOrEmpty(const CodecState& state, const std::string& key, size_t count) {
  if (state.tensor(key).empty()) return {};
  return state.tensor(key, count);
}
}  // namespace

void CompressedAllreduce::restoreState(const CodecState& state) {
  codec_->restoreState(state, "codec.");
  if (feedback_) feedback_->restoreResidual(countOrEmpty(state, "residual", count_));
  if (momentum_) momentum_->restoreVelocity(countOrEmpty(state, "velocity", count_));
}

CompressedAllreduceStats CompressedAllreduce::run(float* data, size_t count) {
  CompressedAllreduceStats stats;
  const int n = comm_.size();
  if (n > 1) stats.bytes_raw = static_cast<int64_t>(2.0 * (n - 1) / n * count * sizeof(float));
  const int64_t start = steadyNowNs();
  if (momentum_) momentum_->accumulate(data, count);
  if (feedback_) feedback_->compensate(data, count);
  stats.codec_ns = steadyNowNs() - start;
  if (codec_->collective() == CodecCollective::kRing && !feedback_ && comm_.size() > 1) {
    exchange_->ringOfRaw(data, count, stats);  // no residual needs this rank's own decode
  } else {
    codec_->roundToNearest(feedback_ != nullptr);  // the residual remembers the rounding
    encodeOwn(data, count, stats);
    if (exchange_->startsFromOwnValues() && count > 0)
      std::memcpy(data, sent_.data(), count * sizeof(float));
    exchange_->sum(payload_, data, count, stats);
  }
  stats.comm_ns = steadyNowNs() - start - stats.codec_ns;
  return stats;
}

void CompressedAllreduce::encodeOwn(const float* data, size_t count,
                                    CompressedAllreduceStats& stats) {
  const int64_t t = steadyNowNs();
  codec_->encode(data, count, payload_);
  sent_.resize(count);
  codec_->decode(payload_.data(), payload_.size(), count, sent_.data(), DecodeMode::kAssign);
  if (feedback_) feedback_->update(data, sent_.data(), count);
  if (momentum_ && codec_->sparse()) momentum_->maskSent(sent_.data(), count);
  stats.codec_ns += steadyNowNs() - t;
}

}  // namespace ranklab
