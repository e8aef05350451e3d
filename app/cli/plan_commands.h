// `ranklab simulate`, `ranklab calibrate` and `ranklab plan` (docs/plan.md).
#pragma once

#include <vector>

#include "app/cli/cli_args.h"
#include "engine/job/job_spec.h"
#include "engine/sim/calibration.h"

namespace ranklab {

// The calibration for `jobs`: the file's (--calibration, else this machine's), with what they
// need and it lacks measured here first (and stored), saying so on stderr; a file of another
// machine is used as it is.
Calibration calibrationFor(const CliArgs& args, const std::vector<JobSpec>& jobs);

int simulateCommand(const CliArgs& args);
int calibrateCommand(const CliArgs& args);
int planCommand(const CliArgs& args);

}  // namespace ranklab
