#include "engine/train/model_average.h"

namespace ranklab {

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
  stats.allreduces = 1;
  return stats;
}

}  // namespace ranklab
