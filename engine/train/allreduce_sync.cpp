#include "engine/train/allreduce_sync.h"

#include <algorithm>

#include "comm/codecs/compressed_allreduce.h"
#include "engine/train/model_average.h"

namespace ranklab {

AllreduceSync::AllreduceSync(std::unique_ptr<GradientTransport> transport,
                             const AllreduceChoice& algorithm, size_t bucket_bytes,
                             CodecOptions codec)
    : transport_(std::move(transport)),
      comm_(transport_->group()),
      algorithm_(algorithm),
      codec_(std::move(codec)),
      allreduce_(transport_->allreduce(algorithm)),
      compressed_copy_(transport_->memory()),
      // A codec compresses the whole gradient at once: no buckets then.
      bucket_floats_(!codec_.compresses() && transport_->overlapsBackward()
                         ? bucket_bytes / sizeof(float)
                         : 0) {
  if (bucket_floats_ > 0 && comm_.size() > 1 && comm_.allowsCommThread())
    thread_ = std::make_unique<CommThread>();
}

AllreduceSync::~AllreduceSync() = default;

void AllreduceSync::start(float* /*params*/, size_t count) {
  if (bucket_floats_ > 0 && comm_.size() > 1) makeBuckets(count);
  if (codec_.compresses())
    compressed_ = std::make_unique<CompressedAllreduce>(comm_, algorithm_, codec_, count);
}

CodecState AllreduceSync::saveCodecState() const {
  return compressed_ ? compressed_->saveState() : CodecState{};
}

void AllreduceSync::restoreCodecState(const CodecState& state) {
  if (compressed_) compressed_->restoreState(state);
}

void AllreduceSync::traceSpans(CommSpans* sink) {
  trace_ = sink;
  allreduce_->traceInto(sink);
}

size_t AllreduceSync::bufferBytesHeld() const {
  return transport_->hostBytesHeld() + compressed_copy_.bytesHeld();
}

void AllreduceSync::makeBuckets(size_t count) {
  if (!buckets_.empty() && buckets_.front().end == count) return;
  buckets_.clear();
  // Backward finishes the last layers first, so buckets are cut from the end: the first
  // bucket to fill is the first to go.
  for (size_t end = count; end > 0;) {
    const size_t begin = end > bucket_floats_ ? end - bucket_floats_ : 0;
    buckets_.push_back({begin, end, static_cast<int>(buckets_.size())});
    end = begin;
  }
}

void AllreduceSync::launch(float* grads, Bucket& bucket) {
  bucket.launched = true;
  const bool first = !step_started_;
  step_started_ = true;
  float* data = grads + bucket.begin;
  const size_t n = bucket.end - bucket.begin;
  auto task = [this, first, data, n, index = bucket.index] {
    if (first && !allreduce_->waitsForPeers()) {
      const int64_t t0 = steadyNowNs();
      comm_.barrier();  // separates waiting for a slow peer from moving bytes
      wait_spans_.push_back({t0, steadyNowNs()});
    }
    int64_t t0 = steadyNowNs();
    allreduce_->runScaled(data, n, 1.f / static_cast<float>(comm_.size()));
    // shm waits inside run(): that part is waiting, the rest around it moving bytes.
    const SpanNs own = allreduce_->lastWait();
    if (own.end_ns > own.begin_ns) {
      wait_spans_.push_back({own.begin_ns, own.end_ns});
      comm_spans_.push_back({t0, own.begin_ns});
      t0 = own.end_ns;
    }
    comm_spans_.push_back({t0, steadyNowNs()});
    if (trace_) {
      CommSpan span;
      span.kind = "bucket";
      span.part = index;
      span.bytes = allreduce_->bytesSent();
      span.begin_ns = t0;
      span.end_ns = comm_spans_.back().end_ns;
      trace_->push_back(span);
    }
    bytes_tx_ += allreduce_->bytesSent();
    bytes_rx_ += allreduce_->bytesReceived();
    ++allreduces_;
  };
  if (thread_) {
    // The thread reads what this thread's device work wrote (a GPU's stream: done first).
    transport_->memory().synchronize();
    thread_->post(std::move(task));
  } else {
    task();
  }
}

void AllreduceSync::gradientReady(float* grads, size_t offset, size_t count) {
  if (bucket_floats_ == 0 || comm_.size() == 1 || buckets_.empty()) return;
  const size_t end = offset + count;
  for (auto& bucket : buckets_) {
    const size_t overlap = std::min(end, bucket.end) -
                           std::min(std::max(offset, bucket.begin), std::min(end, bucket.end));
    bucket.ready += overlap;
    if (!bucket.launched && bucket.ready >= bucket.end - bucket.begin) launch(grads, bucket);
  }
}

SyncStats AllreduceSync::bucketedSync(float* grads) {
  const int64_t backward_end = steadyNowNs();
  // Whatever backward did not announce goes now, last layers first.
  for (auto& bucket : buckets_)
    if (!bucket.launched) launch(grads, bucket);
  if (thread_) thread_->drain();
  SyncStats stats;
  stats.bytes_tx = stats.bytes_raw = bytes_tx_;
  stats.bytes_rx = bytes_rx_;
  stats.allreduces = allreduces_;
  // Time the communication thread spent before backward ended was hidden behind it; only
  // what came after held this rank up.
  auto hidden = [&](const Span& s) {
    return std::max<int64_t>(0, std::min(s.end_ns, backward_end) - s.begin_ns);
  };
  for (const Span& s : wait_spans_) stats.wait_ns += s.end_ns - s.begin_ns - hidden(s);
  for (const Span& s : comm_spans_) {
    stats.comm_ns += s.end_ns - s.begin_ns;
    stats.hidden_ns += hidden(s);
  }
  // Ready for the next step.
  for (auto& bucket : buckets_) bucket.ready = 0, bucket.launched = false;
  step_started_ = false;
  wait_spans_.clear();
  comm_spans_.clear();
  bytes_tx_ = bytes_rx_ = 0;
  allreduces_ = 0;
  return stats;
}

SyncStats AllreduceSync::compressedSync(float* grads, size_t count) {
  return timeCompressedAllreduce(comm_, count, [&](SyncStats& stats) {
    if (!compressed_) {
      compressed_ = std::make_unique<CompressedAllreduce>(comm_, algorithm_, codec_, count);
    }
    // The codec runs on the host: a device's gradient is copied down and its mean back up,
    // the copies counted as moving it.
    float* host = compressed_copy_.down(grads, count);
    const CompressedAllreduceStats c = compressed_->run(host, count);
    stats.bytes_tx = c.bytes_tx;
    stats.bytes_rx = c.bytes_rx;
    stats.compress_ns = c.codec_ns;
    const float scale = 1.f / static_cast<float>(comm_.size());
    for (size_t i = 0; i < count; ++i) host[i] *= scale;
    compressed_copy_.up(grads, count);
  });
}

SyncStats AllreduceSync::sync(float* grads, size_t count) {
  // One rank moves nothing, but a codec still shapes the gradient it trains on.
  if (codec_.compresses()) return compressedSync(grads, count);
  if (bucket_floats_ == 0 || comm_.size() == 1) {
    return averageOverRanks(comm_, *allreduce_, grads, count);
  }
  makeBuckets(count);
  return bucketedSync(grads);
}

}  // namespace ranklab
