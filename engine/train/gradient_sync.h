// How a step's gradients become the same on every rank. One strategy per class;
// the trainer only sees sync().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "comm/collectives/allreduce.h"
#include "comm/communicator.h"
#include "engine/job/job_spec.h"

namespace ranklab {

struct SyncStats {
  int64_t wait_ns = 0;  // blocked until the slowest rank arrived
  int64_t comm_ns = 0;  // moving and reducing bytes
  int64_t bytes_tx = 0;
  int64_t bytes_rx = 0;
  int64_t bytes_raw = 0;  // uncompressed gradient bytes
};

class GradientSync {
 public:
  virtual ~GradientSync() = default;
  // Replaces grads (count floats) with the average over ranks.
  virtual SyncStats sync(float* grads, size_t count) = 0;
};

// Synchronous data parallel: a barrier (measured as wait), then a sum all-reduce by the
// job's algorithm (measured as communication), then divide by the world size.
class AllreduceSync : public GradientSync {
 public:
  AllreduceSync(Communicator& comm, const std::string& algorithm);
  SyncStats sync(float* grads, size_t count) override;

 private:
  Communicator& comm_;
  std::unique_ptr<Allreduce> allreduce_;
};

std::unique_ptr<GradientSync> makeGradientSync(const JobSpec& job, Communicator& comm);

}  // namespace ranklab
