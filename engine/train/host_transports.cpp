#include "engine/train/host_transports.h"

namespace ranklab {

namespace {

// An algorithm's all-reduce of a device's floats: down to the transport's host copy, the
// algorithm there, back up, and done on the device before it returns (a thread waiting for
// this one reads the result next).
class StagedAllreduce : public Allreduce {
 public:
  StagedAllreduce(std::unique_ptr<Allreduce> host, StagedTransport& transport)
      : host_(std::move(host)), transport_(transport) {}

  void run(float* data, size_t count) override {
    through(data, count, [&](float* host) { host_->run(host, count); });
  }
  void runScaled(float* data, size_t count, float scale) override {
    through(data, count, [&](float* host) { host_->runScaled(host, count, scale); });
  }
  int64_t bytesSent() const override { return host_->bytesSent(); }
  int64_t bytesReceived() const override { return host_->bytesReceived(); }
  bool waitsForPeers() const override { return host_->waitsForPeers(); }
  SpanNs lastWait() const override { return host_->lastWait(); }
  void traceInto(CommSpans* sink) override { host_->traceInto(sink); }

 private:
  template <typename Run>
  void through(float* data, size_t count, Run run) {
    const DeviceMemory& memory = transport_.memory();
    float* host = transport_.hostWindow(count);
    memory.download(host, data, count);
    run(host);
    memory.upload(data, host, count);
    memory.synchronize();
  }

  std::unique_ptr<Allreduce> host_;
  StagedTransport& transport_;
};

}  // namespace

std::unique_ptr<Allreduce> StagedTransport::allreduce(const AllreduceChoice& algorithm) {
  return std::make_unique<StagedAllreduce>(HostTransport::allreduce(algorithm), *this);
}

float* StagedTransport::hostWindow(size_t count) {
  if (window_.size() < count) {
    window_.resize(count);
    held_floats_ = window_.size() + shard_.size();
  }
  return window_.data();
}

float* StagedTransport::hostShard(size_t total) {
  const size_t len = owned(total).len;
  if (shard_.size() < len) {
    shard_.resize(len);
    held_floats_ = window_.size() + shard_.size();
  }
  return shard_.data();
}

void StagedTransport::reduceScatterMean(float* data, size_t total) {
  float* host = hostWindow(total);
  memory_.download(host, data, total);
  ring_.reduceScatterMean(host, total);
  const Chunk own = owned(total);
  memory_.upload(data + own.begin, host + own.begin, own.len);
}

void StagedTransport::allGather(float* data, size_t total) {
  float* host = hostWindow(total);
  const Chunk own = owned(total);
  memory_.download(host + own.begin, data + own.begin, own.len);
  ring_.allGather(host, total);
  memory_.upload(data, host, total);
}

void StagedTransport::reduceScatterMean(float* window, size_t offset, size_t count, size_t total,
                                        float* shard) {
  float* host = hostWindow(count);
  float* host_shard = hostShard(total);
  memory_.download(host, window, count);
  ring_.reduceScatterMean(host, offset, count, total, host_shard);
  const Chunk own = owned(total);
  const OwnedPart part = ownedPartOf(own, offset, count);
  const size_t at = part.begin - own.begin;  // the window's owned part, in the shard
  memory_.upload(shard + at, host_shard + at, part.end - part.begin);
}

void StagedTransport::allGather(const float* shard, float* window, size_t offset, size_t count,
                                size_t total) {
  float* host = hostWindow(count);
  float* host_shard = hostShard(total);
  const Chunk own = owned(total);
  const OwnedPart part = ownedPartOf(own, offset, count);
  const size_t at = part.begin - own.begin;  // the window's owned part, in the shard
  memory_.download(host_shard + at, shard + at, part.end - part.begin);
  ring_.allGather(host_shard, host, offset, count, total);
  memory_.upload(window, host, count);
}

}  // namespace ranklab
