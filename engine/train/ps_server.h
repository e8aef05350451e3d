// A server rank of ps-sync or ps-async (world ranks W..W+S-1 with W = parallel.ranks): holds
// one key range of the model, runs the job's optimizer on it, and reports its load.
#pragma once

#include "comm/communicator.h"
#include "engine/job/job_spec.h"
#include "engine/train/trainer.h"

namespace ranklab {

bool isServerRank(const JobSpec& job, int world_rank);

// Serves until every worker has finished. Collective over `world` (matches the workers'
// split in ParameterServerSync).
void serveParameters(const JobSpec& job, Communicator& world, TrainObserver& observer);

}  // namespace ranklab
