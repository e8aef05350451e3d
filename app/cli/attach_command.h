// `ranklab runs attach ID`: follows a run that another process launched (the workbench, a
// `ranklab run` in another terminal) from the run store until it ends.
#pragma once

#include <cstdint>

#include "app/cli/cli_args.h"
#include "storage/run_store.h"

namespace ranklab {

// A line a second with the run's last step, its loss and steps/s, every event as it is
// stored, then the summary. Ctrl-C detaches and leaves the run going. Returns 0 when the run
// ended `done`, 1 otherwise (failed, stopped, lost).
int attachRun(RunStore& store, const CliArgs& args, int64_t id);

}  // namespace ranklab
