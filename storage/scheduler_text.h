// A run's batch job in words, for the CLI and the workbench alike.
#pragma once

#include <string>

#include "storage/records.h"

namespace ranklab {

// "slurm job 12: PENDING (Resources)", "slurm job 12: TIMEOUT (exit 0:15) on n1"; "" for a
// run that no scheduler queued.
inline std::string schedulerText(const RunRow& run) {
  if (run.scheduler_job.empty()) return "";
  return "slurm job " + run.scheduler_job + ": " + run.scheduler_state +
         (run.scheduler_reason.empty() ? "" : " (" + run.scheduler_reason + ")") +
         (run.scheduler_exit.empty() ? "" : " (exit " + run.scheduler_exit + ")") +
         (run.nodes.empty() ? "" : " on " + run.nodes);
}

}  // namespace ranklab
