// A job whose ranks are a command of the user's (launch.command: a PyTorch script that calls
// ranklab.torch.watch, docs/pytorch.md) rather than ranklab's engine: the environment each
// rank gets (torchrun's contract and the run's telemetry, never argv), the command line a
// launcher runs it with, and ranklab's own launcher, N local processes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "engine/job/job_spec.h"
#include "launch/child_process.h"

namespace ranklab {

// Where a rank finds the run: the collector's address, the attempt's wire id, the
// telemetry keys' variable set apart (its value is the launcher's to add), how often to beat.
struct CommandTelemetry {
  std::string endpoint;
  std::string wire_id;
  int heartbeat_ms = 500;
  int span_every = 10;
};

// What every rank of a command gets, besides its own RANK and LOCAL_RANK: WORLD_SIZE,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (a port free a moment ago), the run's telemetry,
// ranklab's Python package on PYTHONPATH where it was built beside this executable, and one
// thread per rank unless OMP_NUM_THREADS says otherwise (as torchrun does).
std::vector<std::string> commandEnvironment(const JobSpec& job, const CommandTelemetry& telemetry,
                                            const std::string& python_dir);

// The command line that starts the job's ranks: the command itself (launch.launcher
// "ranklab", one per rank, or "command", once: it starts its own ranks), under mpirun (each
// rank's contract set from Open MPI's variables) or under torchrun.
// `dir`: where the ranks run; `python_dir`: builtPythonDir's, "" for none.
std::vector<std::string> commandLine(const JobSpec& job, const std::string& mpirun,
                                     const std::vector<std::string>& placement,
                                     const std::string& dir, const std::string& python_dir);

// Where a command runs: the folder of its job file (so the file names its script relative to
// itself, wherever ranklab is started); "" (this process's folder) for a job with no file.
std::string commandDir(const std::string& job_path);

// The folder of ranklab's Python package built beside `executable_dir` (build/python), or ""
// where there is none (installed: the package is on the system's path).
std::string builtPythonDir(const std::string& executable_dir);

// Throws naming launch.command's program when it cannot be started: not found in PATH, or
// not executable. Said before a run is stored.
void requireProgram(const std::string& program);

// Why a command's ranks may have said nothing, from their last lines of stderr and the
// ranks never heard from: the package not on their Python path, or no call to watch. "" when
// every rank was heard.
std::string commandHint(const std::deque<std::string>& last_errors,
                        const std::vector<int>& never_heard);

// launch.launcher = "ranklab": the command started once per rank on this machine, each with
// RANK and LOCAL_RANK of its own; each line it prints is handed on as mpirun --tag-output
// tags it ("[0,R]<stdout>:..."). When one ends in failure the others are stopped (SIGTERM)
// kStopOthersAfter later, as mpirun stops them, and how it ended is said in mpirun's words
// (launch/rank_watch.h reads them).
class LocalRanks : public RankProcess {
 public:
  LocalRanks(int world, const std::vector<std::string>& argv,
             const std::vector<std::string>& environment, const std::string& dir);

  void pump(int wait_ms, const LineHandler& on_line) override;
  bool running() override;
  int exitCode() const override { return exit_code_; }
  void terminate() override;
  void kill() override;
  std::string name() const override;

 private:
  std::vector<std::unique_ptr<ChildProcess>> ranks_;
  std::vector<bool> ended_;
  std::deque<std::string> verdicts_;  // how a rank ended, handed on with the next output
  int exit_code_ = 0;
  int first_failed_ = -1;
  std::chrono::steady_clock::time_point failed_at_;
  bool stopped_others_ = false;
  static constexpr std::chrono::seconds kStopOthersAfter{1};
};

}  // namespace ranklab
