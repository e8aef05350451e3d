#include "comm/codecs/payload_exchange.h"

#include <cstring>

#include "comm/codecs/compressed_ring_allreduce.h"
#include "comm/codecs/payload_allgather.h"
#include "comm/collectives/allreduce_registry.h"
#include "comm/steady_clock.h"

namespace ranklab {

PayloadExchange::PayloadExchange(Communicator& comm, const AllreduceChoice& algorithm,
                                 GradientCodec& codec)
    : comm_(comm), codec_(codec) {
  switch (codec.collective()) {
    case CodecCollective::kRing:
      ring_ = std::make_unique<CompressedRingAllreduce>(comm, codec);
      break;
    case CodecCollective::kAllgather:
      allgather_ = std::make_unique<PayloadAllgather>(comm);
      gathered_.resize(comm.size());
      break;
    case CodecCollective::kSummed:
      allreduce_ = algorithm.make(comm);
      break;
  }
}

PayloadExchange::~PayloadExchange() = default;

void PayloadExchange::runRing(float* data, size_t count, CompressedAllreduceStats& stats) {
  ring_->run(data, count);
  stats.bytes_tx += ring_->bytesSent();
  stats.bytes_rx += ring_->bytesReceived();
  stats.codec_ns += ring_->codecNs();
}

void PayloadExchange::ringOfRaw(float* data, size_t count, CompressedAllreduceStats& stats) {
  // Partial sums on the ring: nothing remembers their error, so keep it unbiased.
  codec_.roundToNearest(false);
  runRing(data, count, stats);
}

void PayloadExchange::sum(std::vector<uint8_t>& payload, float* sum, size_t count,
                          CompressedAllreduceStats& stats) {
  if (ring_) {
    ringOfRaw(sum, count, stats);  // the ring over what every rank sent
    return;
  }
  if (comm_.size() == 1) return;  // `sum` holds what this rank sent
  if (allreduce_) {
    values_.resize(payload.size() / sizeof(float));
    std::memcpy(values_.data(), payload.data(), payload.size());
    allreduce_->run(values_.data(), values_.size());
    std::memcpy(payload.data(), values_.data(), payload.size());
    stats.bytes_tx += allreduce_->bytesSent();
    stats.bytes_rx += allreduce_->bytesReceived();
    const int64_t t = steadyNowNs();
    codec_.decode(payload.data(), payload.size(), count, sum, DecodeMode::kAssign);
    stats.codec_ns += steadyNowNs() - t;
    return;
  }
  gathered_[comm_.rank()].swap(payload);
  allgather_->run(gathered_);
  stats.bytes_tx += allgather_->bytesSent();
  stats.bytes_rx += allgather_->bytesReceived();
  const int64_t t = steadyNowNs();
  for (size_t r = 0; r < gathered_.size(); ++r) {
    codec_.decode(gathered_[r].data(), gathered_[r].size(), count, sum,
                  r == 0 ? DecodeMode::kAssign : DecodeMode::kAdd);
  }
  stats.codec_ns += steadyNowNs() - t;
}

}  // namespace ranklab
