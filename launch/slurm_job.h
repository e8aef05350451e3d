// A run's ranks as a Slurm batch job (launch.scheduler = "slurm"): submitted with sbatch,
// its script runs the same mpirun command a local run starts (Open MPI reads the
// allocation: no hostfile, and it starts its daemons on the other nodes through srun), its
// state followed with scontrol, its output read from the files Slurm writes, stopped with
// scancel. A launcher that exits leaves the job to Slurm. docs/slurm.md.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/job/job_spec.h"
#include "launch/rank_process.h"

namespace ranklab {

// Where a Slurm job is, as scontrol says it.
struct SlurmJobState {
  std::string state;      // PENDING, RUNNING, COMPLETED, CANCELLED, TIMEOUT, NODE_FAIL, ...
  std::string reason;     // why it waits ("Resources", "Priority"); "" for Slurm's "None"
  std::string nodes;      // its nodes, as Slurm writes them ("n1", "n[1-2]"); "" before
  std::string exit_code;  // "exit:signal" ("0:0", "0:15"), once it ended

  bool ended() const;    // a final state (or no longer known to the controller)
  bool started() const;  // RUNNING or later: its ranks may be speaking
  bool operator==(const SlurmJobState&) const = default;
};

// Why a job that ended this way ended the run, in words ("" for COMPLETED, whose verdict
// is the ranks'): "cancelled in Slurm (scancel)", "Slurm's time limit (launch.time_limit
// = 5) was reached", "node n1 failed", ...
std::string slurmEndCause(const SlurmJobState& state);
// A CANCELLED job: the run ends stopped, not failed.
bool slurmCancelled(const SlurmJobState& state);

// Reads `scontrol -o show job ID`'s one line; nothing when it names no job.
std::optional<SlurmJobState> parseScontrolJob(const std::string& line);

// sbatch's arguments for the job (before the script's path): the tasks, the job's
// [launch] keys, the output files (`output_prefix` + "%j.out" / ".err"), no requeue
// (ranklab restarts a failed run itself, from its checkpoint).
std::vector<std::string> sbatchArguments(const LaunchSpec& launch, int tasks,
                                         const std::string& job_name,
                                         const std::string& output_prefix);
// sbatchArguments as people are shown them, before the command its script runs.
std::vector<std::string> shownSubmission(const LaunchSpec& launch, int tasks,
                                         const std::string& job_name,
                                         const std::string& output_prefix);
// The batch script: `command` run with exec, every word quoted for sh.
std::string batchScript(const std::vector<std::string>& command);

// sbatch refused the job (its own words in what()): nothing was queued.
class SlurmRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SlurmJob : public RankProcess {
 public:
  // Submits `command` (mpirun ...) for `tasks` ranks, with `environment` ("NAME=value")
  // added to what the job inherits; its output goes to files in `output_dir`. Throws
  // SlurmRefused with sbatch's words, std::runtime_error when sbatch cannot be run.
  SlurmJob(const LaunchSpec& launch, int tasks, const std::string& job_name,
           const std::vector<std::string>& command, const std::vector<std::string>& environment,
           const std::string& output_dir);

  // Follows a job submitted earlier (a run taken over from a launcher that is gone): its
  // output from what it writes next on.
  SlurmJob(std::string id, const std::string& output_dir, const std::string& job_name);

  const std::string& id() const { return id_; }
  const SlurmJobState& state() const { return state_; }
  ~SlurmJob() override;
  // Asks the controller at most every kPollInterval without waiting for its answer (the
  // answer is read by a later call; running() asks too); `now`: at once, waiting, unless
  // the controller has stopped answering.
  void poll(bool now = false);
  // Whether this launcher cancelled it (terminate() while it had not ended), rather than
  // someone with scancel.
  bool cancelledHere() const { return cancelled_here_; }
  // True once after each change of state since the last call.
  bool takeChange();
  static constexpr std::chrono::milliseconds kPollInterval{500};

  void pump(int wait_ms, const LineHandler& on_line) override;  // the output files' new lines
  bool running() override;
  int exitCode() const override;
  void terminate() override;  // scancel: SIGTERM to its processes, SIGKILL after KillWait
  void kill() override;       // scancel --signal=KILL --full

 private:
  struct OutputFile {
    std::string path;
    long offset = 0;
    std::string pending;
  };
  bool readNew(OutputFile& file, bool is_stderr, const LineHandler& on_line);
  struct Query;  // an scontrol running beside the launcher's loop
  void apply(int status, const std::string& out, const std::string& err);

  std::string id_;
  SlurmJobState state_;
  bool changed_ = true;  // the first state (PENDING, as sbatch left it) is news too
  bool cancelled_here_ = false;
  std::chrono::steady_clock::time_point last_poll_{};
  std::unique_ptr<Query> query_;
  bool answering_ = true;  // the controller's last query got an answer
  OutputFile out_, err_;
};

}  // namespace ranklab
