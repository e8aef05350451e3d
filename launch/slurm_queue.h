// The attempt loop's side of a Slurm job (launch.scheduler = "slurm"): where its output
// goes, each change of its queue state recorded, and how Slurm's end settles the attempt.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "launch/attempt_end.h"
#include "launch/rank_watch.h"
#include "launch/run_recorder.h"
#include "launch/slurm_job.h"

namespace ranklab {

// The folder beside the store where Slurm writes the ranks' output (made 0700, or reused
// when it is this account's own, not a link, not writable by others; else refused, naming
// it): a cluster's nodes share the home folder the store is in, not this machine's temp folder.
std::string slurmOutputDir(const std::string& db_path);

// A Slurm job's queue, followed: each change is a `queue` event and the run's row. While it
// waits its ranks have not started, so neither the silence nor a rank's start-up is timed.
struct QueueFollower {
  using Clock = std::chrono::steady_clock;
  SlurmJob* job;  // nullptr: a local run
  RunRecorder& recorder;
  std::optional<Clock::time_point> all_bye_since;
  static constexpr auto kUnconfirmedLimit = std::chrono::seconds(60);

  // `last_heard` and `watch`: the loop's silence and start-up clocks.
  void operator()(Clock::time_point& last_heard, RankWatch& watch);
  // Whether to stop waiting for Slurm to confirm the job's end: a minute after it was
  // stopped, or after every rank said Bye, its controller still does not answer.
  bool givesUp(const std::optional<Clock::time_point>& stop_sent, bool all_bye);
  // How Slurm ended the job, into the attempt's end: cancelled by someone else is a stop
  // with its cause named; a time limit, a node's failure and the like fail the run.
  void settle(AttemptEnd& end) const;
};

}  // namespace ranklab
