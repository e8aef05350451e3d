// The CLI commands that read or edit the run store: `runs …` and `compare`.
#pragma once

#include "app/cli/cli_args.h"

namespace ranklab {

int runsCommand(const CliArgs& args);  // runs list | show | delete | rename | tag | untag | export
int compareCommand(const CliArgs& args);  // compare ID ID …

}  // namespace ranklab
