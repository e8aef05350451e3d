// `ranklab simulate`, `ranklab calibrate` and `ranklab plan` (docs/plan.md).
#pragma once

#include "app/cli/cli_args.h"

namespace ranklab {

int simulateCommand(const CliArgs& args);
int calibrateCommand(const CliArgs& args);
int planCommand(const CliArgs& args);

}  // namespace ranklab
