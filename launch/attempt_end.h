// What ended one attempt of a run (one mpirun, or one Slurm job), and the run's outcome it
// makes: shared by the attempt loop (launch/job_runner.cpp), the Slurm queue's follower and
// the takeover of a Slurm run (launch/run_takeover.cpp).
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <string>

#include "launch/rank_watch.h"

namespace ranklab {

struct RunOutcome;
class RunRecorder;

// One launch of mpirun (or one Slurm job) for a run: what ended it.
struct AttemptEnd {
  int exit_code = 0;
  std::string failure_text;            // why the launcher ended it
  std::optional<RankFailure> failure;  // the first rank found dead or hung
  std::chrono::steady_clock::time_point
      failure_found;     // when the failure (or the silence) was found
  bool stopped = false;  // on request, or cancelled in Slurm
  bool final = false;    // nothing a restart could change (sbatch refused it)
  std::deque<std::string> last_errors;
  std::string ended_who = "mpirun";  // what exited: mpirun, the Slurm job's, "rank 3"
  std::string hint;                  // what the person may do about it ("" = nothing to add)
};

// How the run ended: stopped for silence, stopped on request, done, or failed (with the
// tail of the ranks' stderr), from the attempt's end and what the ranks reported.
void settle(RunOutcome& outcome, RunRecorder& recorder, const AttemptEnd& end);

}  // namespace ranklab
