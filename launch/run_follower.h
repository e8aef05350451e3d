// Follows a run that another process launches and records, from what that process stores:
// the RunObserver callbacks JobRunner gives its own observer, read back from the run store
// and the launcher's console file. A viewer can go away and follow again later from the
// first step; the store is the record, so nothing the launcher stored is missed.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "launch/job_runner.h"
#include "launch/run_observer.h"
#include "storage/run_store.h"

namespace ranklab {

class RunFollower {
 public:
  // The run `launcher` is about to create (started by startDetached, console in
  // console_path); `command` is how it was started, reported with onStarted.
  RunFollower(const std::string& db_path, LauncherIdentity launcher, std::string console_path,
              std::vector<std::string> command);
  // A run already in the store, from its first step ("" console_path: none to read).
  RunFollower(const std::string& db_path, int64_t run_id, std::string console_path);

  // Reports what was stored since the last call. False once the run has ended: onFinished
  // has been called (when the run exists) and outcome() says how it ended.
  bool poll(RunObserver& observer);

  // The console file moved (renamed once the run's id is known); read on from where it was.
  void setConsolePath(std::string path) { console_path_ = std::move(path); }

  int64_t runId() const { return run_id_; }
  int64_t launcherPid() const { return launcher_.pid; }
  const RunOutcome& outcome() const { return outcome_; }

 private:
  bool findRun(RunObserver& observer);
  void readConsole(RunObserver& observer);
  void readEvents(RunObserver& observer);
  void readRanks(RunObserver& observer);
  void readSteps(RunObserver& observer);
  void readEvals(RunObserver& observer);
  void finish(RunObserver& observer, const RunRow& run);
  bool launcherGone() const;

  RunStore store_;
  LauncherIdentity launcher_;
  std::string console_path_;
  std::vector<std::string> command_;
  int64_t run_id_ = 0;
  bool announced_ = false;  // onStarted told, once, whether the run was found or given
  int64_t console_offset_ = 0;
  std::string console_pending_;  // a line the launcher has not finished writing
  std::string console_error_;    // "run N failed: …" or what it printed before a run
  size_t events_seen_ = 0;
  std::map<int, RankRow> ranks_;                  // as last reported
  std::map<int, int64_t> next_step_;              // per rank: the first step not reported yet
  std::set<std::pair<int64_t, int>> evals_seen_;  // (step, rank)
  int64_t server_load_row_ = 0;
  RunOutcome outcome_;
};

// A line of a launcher's console as the CLI prints a rank's output ("  [rank 3] text",
// "  [rank 3 err] text"): {rank, is_stderr, text}; the launcher's own lines are rank -1, on
// stderr only when they say something went wrong, and its echo of an event ("  [failure]
// rank 2: …") is marked so.
struct ConsoleLine {
  int rank = -1;
  bool is_stderr = true;
  std::string text;
  bool echoes_event = false;
};
ConsoleLine parseConsoleLine(const std::string& line);

}  // namespace ranklab
