// The one collective step allreduce and local SGD share: wait for every rank (measured
// as wait), sum by the job's algorithm (measured as communication), divide by the world.
#pragma once

#include <cstddef>

#include "comm/collectives/allreduce.h"
#include "comm/steady_clock.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

SyncStats averageOverRanks(Communicator& comm, Allreduce& allreduce, float* data, size_t count);

}  // namespace ranklab
