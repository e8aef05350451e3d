#include "engine/train/gradient_sync.h"

#include <chrono>
#include <stdexcept>

#include "comm/codecs/compressed_allreduce.h"

namespace ranklab {

namespace {
int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

AllreduceSync::AllreduceSync(Communicator& comm, const std::string& algorithm, CodecOptions codec)
    : comm_(comm),
      algorithm_(algorithm),
      codec_(std::move(codec)),
      allreduce_(makeAllreduce(algorithm, comm)) {}

AllreduceSync::~AllreduceSync() = default;

SyncStats AllreduceSync::sync(float* grads, size_t count) {
  SyncStats stats;
  // One rank moves nothing, but a codec still shapes the gradient it trains on.
  if (comm_.size() == 1 && codec_.codec == "none") return stats;
  const int64_t t0 = nowNs();
  comm_.barrier();  // separates waiting for a slow peer from moving bytes
  const int64_t t1 = nowNs();
  if (codec_.codec == "none") {
    allreduce_->run(grads, count);
    stats.bytes_tx = stats.bytes_raw = allreduce_->bytesSent();
    stats.bytes_rx = allreduce_->bytesReceived();
  } else {
    if (!compressed_) {
      compressed_ = std::make_unique<CompressedAllreduce>(comm_, algorithm_, codec_, count);
    }
    const CompressedAllreduceStats c = compressed_->run(grads, count);
    stats.bytes_tx = c.bytes_tx;
    stats.bytes_rx = c.bytes_rx;
    stats.bytes_raw = c.bytes_raw;
    stats.compress_ns = c.codec_ns;
  }
  const float scale = 1.f / static_cast<float>(comm_.size());
  for (size_t i = 0; i < count; ++i) grads[i] *= scale;
  stats.wait_ns = t1 - t0;
  stats.comm_ns = nowNs() - t1 - stats.compress_ns;
  return stats;
}

bool compressesWithMomentum(const JobSpec& job) {
  // Not for powersgd: its low-rank step measured worse with it (docs/compression.md).
  const std::string& codec = job.compression.codec;
  const bool heavy_ball = job.train.optimizer == "sgd" && !job.train.nesterov;
  return codec != "none" && codec != "powersgd" && heavy_ball &&
         job.compression.momentum_correction && job.train.momentum > 0;
}

CodecOptions codecOptions(const JobSpec& job, std::vector<MatrixBlock> matrices) {
  const CompressionSpec& c = job.compression;
  CodecOptions o;
  o.codec = c.codec;
  o.error_feedback = c.error_feedback;
  o.bits = c.bits;
  o.bucket = c.bucket;
  o.ratio = c.ratio;
  o.threshold = c.threshold;
  o.half_values = c.value_dtype == "fp16";
  o.rank = c.rank;
  o.warm_start = c.warm_start;
  o.local_momentum = compressesWithMomentum(job) ? static_cast<float>(job.train.momentum) : 0.f;
  o.seed = job.train.seed;
  o.matrices = std::move(matrices);
  return o;
}

std::unique_ptr<GradientSync> makeGradientSync(const JobSpec& job, Communicator& comm,
                                               std::vector<MatrixBlock> matrices) {
  if (job.parallel.strategy == "allreduce") {
    return std::make_unique<AllreduceSync>(comm, job.parallel.algorithm,
                                           codecOptions(job, std::move(matrices)));
  }
  throw std::invalid_argument("parallel.strategy \"" + job.parallel.strategy +
                              "\" is not available; allowed: allreduce");
}

}  // namespace ranklab
