#include "engine/train/gradient_sync.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

#include "comm/codecs/codec_traits.h"
#include "comm/steady_clock.h"

namespace ranklab {

SyncStats& SyncStats::operator+=(const SyncStats& o) {
  wait_ns += o.wait_ns;
  comm_ns += o.comm_ns;
  hidden_ns += o.hidden_ns;
  inside_forward_ns += o.inside_forward_ns;
  inside_backward_ns += o.inside_backward_ns;
  bytes_tx += o.bytes_tx;
  bytes_rx += o.bytes_rx;
  bytes_raw += o.bytes_raw;
  compress_ns += o.compress_ns;
  staleness = std::max(staleness, o.staleness);
  allreduces += o.allreduces;
  reduce_scatters += o.reduce_scatters;
  all_gathers += o.all_gathers;
  sends += o.sends;
  recvs += o.recvs;
  return *this;
}

SyncStats timeCompressedAllreduce(Communicator& comm, size_t count,
                                  const std::function<void(SyncStats&)>& run) {
  SyncStats stats;
  const int n = comm.size();
  const int64_t t0 = steadyNowNs();
  comm.barrier();  // separates waiting for a slow peer from moving bytes
  const int64_t t1 = steadyNowNs();
  if (n > 1) {
    stats.bytes_raw = static_cast<int64_t>(2.0 * (n - 1) / n * count * sizeof(float));
    stats.allreduces = 1;
  }
  run(stats);
  stats.wait_ns = t1 - t0;
  stats.comm_ns = steadyNowNs() - t1 - stats.compress_ns;
  return stats;
}

bool compressesWithMomentum(const JobSpec& job) {
  // Not for powersgd: its low-rank step measured worse with it (docs/compression.md).
  const bool heavy_ball = job.train.optimizer == OptimizerKind::kSgd && !job.train.nesterov;
  return codecTraitsOf(job.compression.codec).momentum_correction && heavy_ball &&
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
  o.half_values = c.value_dtype == ValueDtype::kFp16;
  o.rank = c.rank;
  o.warm_start = c.warm_start;
  o.local_momentum = compressesWithMomentum(job) ? static_cast<float>(job.train.momentum) : 0.f;
  o.seed = job.train.seed;
  o.matrices = std::move(matrices);
  return o;
}

std::string describeCompression(const CodecOptions& o) {
  if (!o.compresses()) return "none";
  auto number = [](double value) {
    std::ostringstream out;
    out << value;
    return out.str();
  };
  // The keys the codec takes, in its traits' order (the text checkpoints were written with).
  const std::map<std::string, std::string> values = {
      {"bits", "bits=" + std::to_string(o.bits)},
      {"bucket", "bucket=" + std::to_string(o.bucket)},
      {"ratio", "ratio=" + number(o.ratio)},
      {"threshold", "threshold=" + number(o.threshold)},
      {"value_dtype", std::string("values=") + (o.half_values ? "fp16" : "fp32")},
      {"rank", "rank=" + std::to_string(o.rank)},
      {"warm_start", std::string("warm_start=") + (o.warm_start ? "1" : "0")}};
  std::string text = o.codec;
  for (const auto& key : codecTraitsOf(o.codec).keys)
    if (const auto it = values.find(key); it != values.end()) text += " " + it->second;
  text += std::string(" error_feedback=") + (o.error_feedback ? "1" : "0");
  text += " momentum_correction=" + number(o.local_momentum);
  return text;
}

}  // namespace ranklab
