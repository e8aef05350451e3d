#include "engine/train/gradient_sync.h"

#include <chrono>
#include <stdexcept>

namespace ranklab {

namespace {
int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

AllreduceSync::AllreduceSync(Communicator& comm, const std::string& algorithm)
    : comm_(comm), allreduce_(makeAllreduce(algorithm, comm)) {}

SyncStats AllreduceSync::sync(float* grads, size_t count) {
  SyncStats stats;
  stats.bytes_raw = static_cast<int64_t>(count * sizeof(float));
  if (comm_.size() == 1) return stats;
  const int64_t t0 = nowNs();
  comm_.barrier();  // separates waiting for a slow peer from moving bytes
  const int64_t t1 = nowNs();
  allreduce_->run(grads, count);
  const float scale = 1.f / static_cast<float>(comm_.size());
  for (size_t i = 0; i < count; ++i) grads[i] *= scale;
  stats.wait_ns = t1 - t0;
  stats.comm_ns = nowNs() - t1;
  stats.bytes_tx = allreduce_->bytesSent();
  stats.bytes_rx = allreduce_->bytesReceived();
  return stats;
}

std::unique_ptr<GradientSync> makeGradientSync(const JobSpec& job, Communicator& comm) {
  if (job.parallel.strategy == "allreduce") {
    return std::make_unique<AllreduceSync>(comm, job.parallel.algorithm);
  }
  throw std::invalid_argument("parallel.strategy \"" + job.parallel.strategy +
                              "\" is not available; allowed: allreduce");
}

}  // namespace ranklab
