#include "engine/train/nccl_sync.h"

#include "comm/steady_clock.h"

namespace ranklab {

NcclSync::NcclSync(Communicator& peers, int gpu)
    : peers_(peers), nccl_(peers, gpu), allreduce_(nccl_) {}

SyncStats NcclSync::sync(float* grads, size_t count) {
  SyncStats stats;
  const int n = peers_.size();
  if (n == 1) return stats;
  const int64_t start = steadyNowNs();
  allreduce_.run(grads, count, /*mean=*/true);
  stats.comm_ns = steadyNowNs() - start;
  // What a ring all-reduce moves per rank: 2 (n - 1) / n of the buffer each way.
  const auto bytes = static_cast<int64_t>(count * sizeof(float));
  stats.bytes_tx = stats.bytes_rx = 2 * (n - 1) * bytes / n;
  stats.bytes_raw = stats.bytes_tx;
  stats.allreduces = 1;
  return stats;
}

}  // namespace ranklab
