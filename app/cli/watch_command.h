// `ranklab watch [--nproc N] -- COMMAND...` (docs/pytorch.md): a command of the user's, a
// PyTorch script that calls ranklab.torch.watch, run as a job's ranks and followed live.
#pragma once

#include "app/cli/cli_args.h"
#include "engine/job/job_spec.h"

namespace ranklab {

// The job `watch` runs: COMMAND as --nproc local ranks (launch.launcher "ranklab"), or, when
// COMMAND is itself a launcher (mpirun, mpiexec, srun, torchrun), started once with as many
// ranks as --nproc or its own -np / -n / --ntasks / --nproc_per_node say. Named --name, or
// after the script (train.py -> "train"); --set and the other overrides applied and checked.
// Throws UsageError naming what is missing or wrong, JobError for an override.
JobSpec watchedJob(const CliArgs& args);

}  // namespace ranklab
