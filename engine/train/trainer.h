// The training loop of one rank (a TrainingRun driven step by step, training_run.h).
// Progress goes to a TrainObserver, so the engine never touches sockets.
#pragma once

#include <cstdint>
#include <string>

#include "comm/communicator.h"
#include "engine/data/idx_dataset.h"
#include "engine/job/job_spec.h"
#include "engine/train/train_observer.h"

namespace ranklab {

// Runs the job's epochs on this rank's shard; every training rank must call it
// (collectives). Under a parameter server, server ranks call serveParameters() instead.
TrainResult train(const JobSpec& job, Communicator& comm, const Dataset& train_set,
                  const Dataset& test_set, TrainObserver& observer);

}  // namespace ranklab
