// Synchronous data parallel over shared memory with a sharded update
// (parallel.algorithm = "shm-sharded", ranks on one host): the parameters live once in
// shared memory and each rank's gradient buffer is its slot there (comm/collectives/
// shm_shared_model.h). After backward rank r sums chunk r over all slots (the mean, in shm's
// order: the same bits as shm), its optimizer updates only chunk r of the shared
// parameters, and a fence publishes them. No copy in or out, and the update work is split
// n ways. Telemetry: wait = the fences, comm = the sum.
#pragma once

#include <memory>

#include "comm/collectives/shm_shared_model.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

class ShmShardedSync : public GradientSync {
 public:
  explicit ShmShardedSync(Communicator& comm) : comm_(comm) {}

  Communicator& peers() override { return comm_; }
  // Allocates the shared model (collective; throws std::invalid_argument when the ranks do
  // not share one host) and copies `params` into it.
  ModelBuffers placeModel(const float* params, size_t count) override;
  ParamRange updateRange(size_t count) const override;
  SyncStats sync(float* grads, size_t count) override;
  // The fence after each rank updated its chunk: waiting for the slowest update.
  SyncStats afterUpdate(float* params, size_t count) override;

 private:
  ShmSharedModel& shared(size_t count) const;

  Communicator& comm_;
  std::unique_ptr<ShmSharedModel> shared_;
};

}  // namespace ranklab
