// Launch/collect core shared by the CLI and the workbench: starts mpirun with N
// ranklab-worker ranks, collects their telemetry, stores it, reports it live.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/job/job_spec.h"
#include "launch/private_dir.h"
#include "launch/rank_process.h"
#include "launch/run_observer.h"
#include "storage/records.h"

namespace ranklab {

class Collector;
class RankWatch;
class RunRecorder;
class RestartPlan;
struct AttemptEnd;

struct LaunchOptions {
  std::string db_path;      // run store file
  std::string worker_path;  // ranklab-worker; "" = next to the running executable
  // The workbench's: ranklab (the CLI), which runs a job in a process of its own so the run
  // outlives the workbench; "" = next to the running executable.
  std::string launcher_path;
  // The user said to open a store another account owns (--allow-foreign-store): passed on.
  bool allow_foreign_store = false;
  std::string mpirun = "mpirun";
  int stop_grace_ms = 5000;  // after requestStop(): SIGTERM, then SIGKILL after this
  // A live simulation (ranklab simulate --live): this many worker processes send every
  // rank's records, each told `worker_args` (the calibration, the pace); 0: a real launch,
  // one process per rank.
  int feeders = 0;
  std::vector<std::string> worker_args;
  std::string origin;  // the stored run's origin where it is not "ranklab" ("simulated")
};

struct RunOutcome {
  int64_t run_id = 0;
  std::string status;  // done | failed | stopped
  int exit_code = 0;   // mpirun's
  std::string error;   // why it failed, "" when done
};

class JobRunner {
 public:
  explicit JobRunner(LaunchOptions options);

  // Blocks until the run ends (after train.max_restarts restarts at most). Every step
  // received is in the store when this returns.
  RunOutcome run(const JobSpec& job, const std::string& job_path, RunObserver& observer);

  // Reads the job (from `toml_text`, or the file `job_path` when the text is empty), applies
  // the overrides and runs it; a job that does not check out is a failed outcome listing
  // every problem, file, line and key, with nothing launched.
  RunOutcome runJobText(const std::string& toml_text, const std::string& job_path,
                        const std::vector<std::string>& overrides, RunObserver& observer);

  // Takes over a Slurm run whose launcher is gone (killed, crashed) while its job still
  // runs: this process becomes its launcher, from the record the gone one left beside the
  // store, to the job's end (no restart after it). Throws naming why it cannot: not a
  // Slurm run, no record, the job already ended, or another launcher follows it.
  RunOutcome adopt(int64_t run_id, RunObserver& observer);

  // Safe from any thread: asks the running job to stop (clean, then forced).
  void requestStop() { stop_requested_ = true; }
  // Safe from any thread: a fault for a rank of the running attempt, sent by the launcher
  // as a signal (kill: SIGKILL, stop: SIGSTOP, continue: SIGCONT, slow: +kSlowFaultMs a step
  // from then on, engine/job/fault_signals.h) and recorded as a fault event; detection and
  // restarts follow as for a [[faults]] one. Throws std::invalid_argument for another action.
  void requestFault(int rank, const std::string& action);

  // The exact command run() will start (for display), given the files it will use.
  std::vector<std::string> command(const JobSpec& job, const std::string& resolved_job_path,
                                   const std::string& run_id, const std::string& endpoint) const;

 private:
  RunOutcome launch(const JobSpec& job, const std::string& job_path, RunObserver& observer);
  // One mpirun of the run (the first, or a restart's), until it has exited.
  AttemptEnd runAttempt(const JobSpec& job, int attempt, int64_t run_id, RunRecorder& recorder,
                        RestartPlan& restarts, RunObserver& observer);

  // The attempt's ranks: mpirun as a child of this process, or a Slurm job that runs it;
  // `shown` gets the command as people see it. A Slurm job sbatch refused (or no sbatch) is
  // nullptr, its words in `end` (a child that cannot start throws, naming it).
  std::unique_ptr<RankProcess> startRanks(const JobSpec& job, int64_t run_id,
                                          const std::vector<std::string>& argv,
                                          const std::vector<std::string>& environment,
                                          std::vector<std::string>& shown, AttemptEnd& end);
  // Watches one attempt's ranks (started here, or a Slurm job taken over) until they end.
  AttemptEnd watchAttempt(const JobSpec& job, RankProcess& child, Collector& collector,
                          RunRecorder& recorder, RestartPlan& restarts, RunObserver& observer);
  // The faults asked for since the last look, sent to their ranks' processes.
  void sendRequestedFaults(const RankWatch& watch, RunRecorder& recorder);

  LaunchOptions options_;
  std::atomic<bool> stop_requested_{false};
  std::mutex faults_mutex_;
  std::vector<std::pair<int, std::string>> requested_faults_;  // (rank, action)
  int64_t last_run_id_ = 0;  // the run launch() created, for its error message
  std::string command_dir_;  // where a command's ranks run (launch/command_ranks.h)
};

// A command as shown to people: the inline job (kilobytes of base64) as a note of its size.
std::vector<std::string> shownCommand(std::vector<std::string> argv);

// What Open MPI needs here ("NAME=value"): root allowed, more ranks than cores, no
// ptrace-based single copy, idle ranks yield.
std::vector<std::string> mpiEnvironment();

// A folder of its own for one mpirun's shared-memory segments (Open MPI's vader backing
// files), removed with everything in it when this goes: a rank killed by a signal cannot
// unlink its segment, which would otherwise stay in /dev/shm for good. A PrivateDir in
// /dev/shm (the temp folder where there is none): no other account can plant or enter it.
class MpiSegmentFolder {
 public:
  MpiSegmentFolder();

  const std::string& path() const { return dir_.path(); }
  // mpiEnvironment() with the segments placed in this folder.
  std::vector<std::string> environment() const;

 private:
  PrivateDir dir_;
};

// Folder of the running executable (to find ranklab-worker beside it).
std::string executableDir();

}  // namespace ranklab
