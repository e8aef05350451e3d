// The CLI commands that bring other tools' runs in and take any run apart: `import` (PyTorch
// profiler traces as a run), `analyze` (where each rank's time went, across ranks) and `diff`
// (where two runs' step times differ).
#pragma once

#include "app/cli/cli_args.h"

namespace ranklab {

int importCommand(const CliArgs& args);   // import PATH... [--name N]
int analyzeCommand(const CliArgs& args);  // analyze ID
int diffCommand(const CliArgs& args);     // diff A B

}  // namespace ranklab
