#include "engine/train/gradient_sync.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <stdexcept>

#include "engine/train/allreduce_sync.h"
#include "engine/train/local_sgd_sync.h"
#include "engine/train/model_average.h"
#include "engine/train/ps_worker_sync.h"
#include "engine/train/shm_sharded_sync.h"

namespace ranklab {

SyncStats& SyncStats::operator+=(const SyncStats& o) {
  wait_ns += o.wait_ns;
  comm_ns += o.comm_ns;
  hidden_ns += o.hidden_ns;
  bytes_tx += o.bytes_tx;
  bytes_rx += o.bytes_rx;
  bytes_raw += o.bytes_raw;
  compress_ns += o.compress_ns;
  staleness = std::max(staleness, o.staleness);
  return *this;
}

int64_t steadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

SyncStats averageOverRanks(Communicator& comm, Allreduce& allreduce, float* data, size_t count) {
  SyncStats stats;
  if (comm.size() == 1) return stats;
  const int64_t t0 = steadyNowNs();
  // Separates waiting for a slow peer from moving bytes; shm has a barrier of its own.
  if (!allreduce.waitsForPeers()) comm.barrier();
  const int64_t t1 = steadyNowNs();
  allreduce.runScaled(data, count, 1.f / static_cast<float>(comm.size()));
  const SpanNs own = allreduce.lastWait();
  stats.wait_ns = t1 - t0 + own.end_ns - own.begin_ns;
  stats.comm_ns = steadyNowNs() - t0 - stats.wait_ns;
  stats.bytes_tx = stats.bytes_raw = allreduce.bytesSent();
  stats.bytes_rx = allreduce.bytesReceived();
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

std::string describeCompression(const CodecOptions& o) {
  if (o.codec == "none") return "none";
  auto number = [](double value) {
    std::ostringstream out;
    out << value;
    return out.str();
  };
  std::string text = o.codec;
  if (o.codec == "qsgd") text += " bits=" + std::to_string(o.bits);
  if (o.codec == "qsgd" || o.codec == "sign") text += " bucket=" + std::to_string(o.bucket);
  if (o.codec == "topk" || o.codec == "randomk") text += " ratio=" + number(o.ratio);
  if (o.codec == "threshold") text += " threshold=" + number(o.threshold);
  if (o.codec == "topk" || o.codec == "threshold")
    text += std::string(" values=") + (o.half_values ? "fp16" : "fp32");
  if (o.codec == "powersgd")
    text += " rank=" + std::to_string(o.rank) + " warm_start=" + (o.warm_start ? "1" : "0");
  text += std::string(" error_feedback=") + (o.error_feedback ? "1" : "0");
  text += " momentum_correction=" + number(o.local_momentum);
  return text;
}

std::unique_ptr<GradientSync> makeGradientSync(const JobSpec& job, Communicator& world,
                                               std::vector<MatrixBlock> matrices) {
  const auto& p = job.parallel;
  const AllreduceOptions options{p.ranks_per_host};
  if (p.strategy == "allreduce" && p.algorithm == "shm-sharded") {
    return std::make_unique<ShmShardedSync>(world);
  }
  if (p.strategy == "allreduce") {
    return std::make_unique<AllreduceSync>(world, p.algorithm, options,
                                           static_cast<size_t>(p.bucket_kb) * 1024,
                                           codecOptions(job, std::move(matrices)));
  }
  if (p.strategy == "local-sgd") {
    return std::make_unique<LocalSgdSync>(world, p.algorithm, options, p.average_every);
  }
  if (usesParameterServer(job)) return std::make_unique<ParameterServerSync>(world, job);
  throw std::invalid_argument("parallel.strategy \"" + p.strategy +
                              "\" is not available; allowed: allreduce, ps-sync, ps-async, "
                              "local-sgd");
}

}  // namespace ranklab
