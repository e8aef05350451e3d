// ranklab: run, validate and inspect distributed training jobs from a terminal.
#include <csignal>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/build_info.h"
#include "app/cli/analysis_commands.h"
#include "app/cli/attach_command.h"
#include "app/cli/bench_command.h"
#include "app/cli/cli_args.h"
#include "app/cli/json_output.h"
#include "app/cli/memory_check.h"
#include "app/cli/plan_commands.h"
#include "app/cli/prediction_record.h"
#include "app/cli/progress_printer.h"
#include "app/cli/rank_capacity.h"
#include "app/cli/report_format.h"
#include "app/cli/store_commands.h"
#include "app/cli/watch_command.h"
#include "app/terminal_text.h"
#include "comm/collectives/allreduce_registry.h"
#include "engine/job/job_file.h"
#include "engine/job/job_spec.h"
#include "engine/job/stored_job.h"
#include "engine/sim/simulator.h"
#include "launch/detached_run.h"
#include "launch/job_runner.h"
#include "launch/private_dir.h"
#include "storage/run_origin.h"
#include "storage/run_store.h"
#include "storage/store_files.h"

namespace ranklab {
namespace {

constexpr const char* kUsageText = R"(usage: ranklab <command> [options]

commands:
  run JOB.toml [--ranks N] [--set section.key=value ...]   launch a job, store it, print its summary
        [--max-restarts N]                                 restart from the last checkpoint after a failure
        [--hosts a:2,b:2 | --hostfile FILE]                ranks on other hosts, placed by Open MPI
        [--slurm]                                          submit to Slurm (launch.scheduler = "slurm"):
                                                           queued, then run in its allocation
        [--text-from FILE] [--worker PATH]                 the job's text from FILE (JOB.toml names it, as
                                                           the workbench launches an unsaved form); the worker
        [--ignore-memory-estimate]                         launch even when the ranks on this machine are
                                                           estimated to need more memory than it has
  watch [--nproc N] [--name N] [--set k=v] -- COMMAND...  run a PyTorch script that calls ranklab.torch.watch
                                                           as N local ranks (torchrun's environment), or
                                                           wrap a launcher (mpirun, srun, torchrun) that
                                                           starts its own; stored, live (docs/pytorch.md)
  resume ID [--ranks M] [--set section.key=value ...]      run ID's job again from its checkpoint, as a new
                                                           run (on M ranks: elastic, train.elastic = true)
  validate JOB.toml [--set section.key=value ...]          check a job file without launching, and each rank's
                                                           estimated peak memory against this machine's
                                                           (exit status 3: valid, but it does not fit)
  runs list                                                every stored run, newest first
  runs show ID                                             one run's summary and tags, its chronic
                                                           stragglers, who held up a run not done
  runs attach ID                                           follow a running run (launched elsewhere) to its end;
                                                           take over a Slurm run whose launcher is gone
  runs rename ID NAME                                      give a run a new name
  runs tag ID TAG... / runs untag ID TAG...                add or remove tags
  runs export ID --csv FILE                                its step rows (one per rank per step; FILE "-": stdout)
  runs export ID --trace FILE.json                         Chrome Trace Event JSON (Perfetto, chrome://tracing)
        [--step-range FIRST:LAST] [--rank-list 0-15,777]   only those steps of those ranks
  runs delete ID                                           remove a run and all its rows
  compare ID ID...                                         the settings that differ, summaries side by side
  import PATH... [--name N]                                PyTorch profiler traces (files, or a folder of
                                                           them, a rank each) stored as a run; prints its id
  analyze ID                                               where each rank's time went, the collectives'
                                                           waiting and transfer, stragglers (chronic or
                                                           moving), critical path; a run not done: who
                                                           is behind (last step, collective, phase)
  diff A B                                                 B's step time against A's, split by rank and phase
  simulate JOB.toml [--ranks N] [--set k=v ...] [--steps K]  a run computed from the job's model and this
        [--calibration FILE]                               machine's calibration, stored as a run (origin
        [--live [--rate R] [--seconds S]]                  "simulated"); --live: sent as its ranks'
                                                           telemetry, R steps/s a rank; docs/plan.md
  calibrate [JOB.toml] [--all] [--export FILE]             measure what the simulator needs for the job
        [--calibration FILE]                               (stored per machine, reused; --all: again)
  plan JOB.toml --ranks N [--memory-per-rank SIZE]         every valid layout for N ranks, simulated, ranked
        [--top K] [--calibration FILE]                     by predicted time per sample
        [--run K [--steps S]]                              then run the top K for real (S steps each):
                                                           predicted against measured
  bench allreduce [--worlds 2,4] [--algorithms {ALGORITHMS}] [--min-bytes 4]
        [--max-bytes 64M] [--ranks-per-host N] [--repeats 3]  all-reduce busbw per size, checked
        [--seconds 0.1]                                     a timed batch's length per size
        [--hosts a:2,b:2] [--mca name=value ...]           across hosts, placed by Open MPI

options for every command:
  --db PATH   run store file (default: $XDG_DATA_HOME/ranklab/runs.db or ~/.local/share/ranklab/runs.db)
  --json      machine-readable output on stdout
  --quiet     (run) no per-second progress lines; rank output and errors still shown
  --verbose   (run) also each rank's set-up events and the summary's tables per group and
              per layer (`runs show ID` prints those after any run)
  --allow-foreign-store   open the store even when another account owns it (refused otherwise)
  --version   the version and the commit this binary was built from
)";

// The usage text with the all-reduce algorithms from their registry.
std::string usage() {
  std::string text = kUsageText;
  std::string algorithms;
  for (const auto& name : allreduceAlgorithms())
    algorithms += (algorithms.empty() ? "" : ",") + name;
  text.replace(text.find("{ALGORITHMS}"), 12, algorithms);
  return text;
}

JobSpec loadWithOverrides(const CliArgs& args) {
  JobOverrides overrides = args.overrides;
  if (args.ranks) overrides.push_back("parallel.ranks=" + std::to_string(*args.ranks));
  return loadJob(positional(args, 1, "job file"), overrides);
}

// The exit status of a job that is valid but whose ranks on this machine are estimated to
// need more memory than it has: apart from 2 (not valid), so scripts can tell.
constexpr int kDoesNotFit = 3;

// The memory check of `job`, or nullopt after saying on stderr why there is no estimate (a
// model shape the launch itself will refuse, naming its key).
std::optional<MemoryCheck> memoryCheckOf(const JobSpec& job) {
  if (runsCommand(job))
    return std::nullopt;  // a command's ranks: the engine's estimate is not theirs
  try {
    return checkMemory(job);
  } catch (const std::exception& e) {
    std::cerr << "memory: not estimated: " << e.what() << "\n";
    return std::nullopt;
  }
}

// validate --json's "rank_capacity" object.
nlohmann::json capacityJson(const RankCapacity& capacity) {
  return {{"ranks_here", capacity.ranks_here},
          {"cores", capacity.cores},
          {"ranks_allowed", capacity.allowed},
          {"fits", capacity.fits()},
          {"refusal", capacity.refusal}};
}

// What validate's first line says of a valid job, by what this machine lacks.
std::string validVerdict(bool fits_memory, const RankCapacity& capacity) {
  if (!capacity.fits()) return ": valid, but too many ranks to launch on this machine (";
  return fits_memory ? ": valid (" : ": valid, but too big for this machine's memory (";
}

int validateCommand(const CliArgs& args) {
  noMoreThan(args, 2, "validate");
  const JobSpec job = loadWithOverrides(args);
  const RankCapacity capacity = checkRankCapacity(job);
  const std::optional<MemoryCheck> memory = memoryCheckOf(job);
  const bool fits = !memory || memory->fits();
  if (args.json) {
    nlohmann::json out{{"valid", true},
                       {"name", job.name},
                       {"fits_memory", fits},
                       {"rank_capacity", capacityJson(capacity)}};
    if (memory) out["memory"] = memoryJson(*memory);
    printJson(std::cout, out, std::cerr);
  } else {
    std::cout << positional(args, 1, "job file") << validVerdict(fits, capacity)
              << job.parallel.ranks
              << (runsCommand(job)
                      ? " ranks of a command, launcher " + nameText(job.launch.launcher)
                      : " ranks, " + job.parallel.strategy + "/" + job.parallel.algorithm)
              << ")\n";
    if (memory) printMemory(std::cout, *memory);
  }
  if (!capacity.fits()) std::cerr << capacity.refusal << "\n";
  if (!fits) std::cerr << memory->refusal << "\n";
  // Too many ranks stays a refusal: no flag makes thousands of processes fit two cores.
  return capacity.fits() && (fits || args.ignore_memory) ? 0 : kDoesNotFit;
}

// Before a launch (nothing is started): the refusal of a job that would start more rank
// processes here than this machine's cores take, or whose ranks here are estimated to need
// more memory than it has (unless --ignore-memory-estimate); each cause said.
std::optional<int> refuseIfTooBig(const CliArgs& args, const JobSpec& job) {
  const RankCapacity capacity = checkRankCapacity(job);
  if (!capacity.fits()) std::cerr << "ranklab: not launched: " << capacity.refusal << "\n";
  // A command's ranks hold what it makes of them: the engine's estimate says nothing of it.
  const std::optional<MemoryCheck> memory = args.ignore_memory ? std::nullopt : memoryCheckOf(job);
  const bool fits_memory = !memory || memory->fits();
  if (!fits_memory) std::cerr << "ranklab: not launched: " << memory->refusal << "\n";
  if (capacity.fits() && fits_memory) return std::nullopt;
  return kDoesNotFit;
}

JobRunner* g_active_runner = nullptr;
volatile std::sig_atomic_t g_stop_signal = 0;

// Ctrl-C stops the ranks cleanly (then forcibly) and still stores what they reported.
void stopOnSignal(int signal) {
  g_stop_signal = signal;
  if (g_active_runner != nullptr) g_active_runner->requestStop();
}

// Runs a job to its end, `launch` starting it on the runner: progress, summary, and the exit
// status. A workbench drives it by signals: SIGINT stops, SIGRTMIN+2 carries a rank fault.
int runJob(const CliArgs& args, int epochs,
           const std::function<RunOutcome(JobRunner&, RunObserver&)>& launch,
           LaunchOptions options = {}) {
  options.db_path = args.db;
  options.worker_path = args.worker;
  JobRunner runner(options);
  g_active_runner = &runner;
  std::signal(SIGINT, stopOnSignal);
  std::signal(SIGTERM, stopOnSignal);
  std::signal(SIGHUP, stopOnSignal);  // the terminal closed: stop cleanly, store the run
  // `ranklab run … | head`: a closed pipe fails the write, not the launcher with its run.
  std::signal(SIGPIPE, SIG_IGN);
  const RankFaultListener faults(
      [&runner](int rank, const std::string& action) { runner.requestFault(rank, action); });
  ProgressPrinter printer(epochs, args.quiet, args.verbose);
  const RunOutcome outcome = launch(runner, printer);
  if (outcome.run_id == 0) {  // the job did not check out: nothing was launched
    std::cerr << outcome.error << "\n";
    return 2;
  }
  RunStore store(args.db);
  const auto summary = store.summary(outcome.run_id);
  if (!summary) {
    throw std::runtime_error(args.db + ": run " + std::to_string(outcome.run_id) +
                             " is gone from the store (was the file deleted during the run?)");
  }
  recordMatchingPrediction(store, outcome.run_id);
  printRunWithPrediction(std::cout, store, *summary, args.json,
                         args.verbose ? SummaryDetail::full : SummaryDetail::brief);
  if (!outcome.error.empty())
    std::cerr << "run " << outcome.run_id << " failed: " << outcome.error << "\n";
  // Stopped by a signal: 128 + its number, as shells expect (130 for Ctrl-C).
  if (g_stop_signal != 0 && outcome.status != "done") return 128 + g_stop_signal;
  return outcome.status == "done" ? 0 : 1;
}

// The job from its file, or (--text-from) from another file's text under its name.
JobSpec jobToRun(const CliArgs& args, const std::string& job_path) {
  if (args.text_from.empty()) return loadWithOverrides(args);
  const std::string text = readJobFile(args.text_from);
  JobOverrides overrides = args.overrides;
  if (args.ranks) overrides.push_back("parallel.ranks=" + std::to_string(*args.ranks));
  return parseJob(text, job_path.empty() ? "job.toml" : job_path, overrides);
}

// `simulate --live`: the simulated ranks' records sent through the real path (Reporters,
// the collector, the recorder, the store) by a few processes, at the job's pace
// (simulate.rate), followed like a run.
int simulateLiveCommand(const CliArgs& args) {
  noMoreThan(args, 2, "simulate");
  const std::string& job_path = positional(args, 1, "job file");
  JobSpec job = jobToRun(args, job_path);
  const Calibration calibration = calibrationFor(args, {job});
  // Refused here, naming what is not modelled or calibrated, before a run is stored.
  const double predicted_step_s = predictRun(job, calibration, 2).step_s;
  const double rate = job.simulate.rate;
  int64_t steps = args.steps.value_or(0);
  if (args.seconds) {
    const double per_step = rate > 0 ? 1 / rate : predicted_step_s;
    steps = std::max<int64_t>(1, static_cast<int64_t>(*args.seconds / per_step));
  }
  if (steps > 0) job.train.max_steps = steps;
  job.name += " (simulated)";
  const PrivateDir dir;
  LaunchOptions options;
  options.origin = originName(RunOrigin::kSimulated);
  // A few processes send every rank's records: as many as the cores, two at least.
  options.feeders = std::min(job.parallel.ranks,
                             std::max(2, static_cast<int>(std::thread::hardware_concurrency())));
  options.worker_args = {
      "--simulate-live", dir.write("calibration.json", calibrationJson(calibration)),
      "--rate",          std::to_string(rate),
      "--steps",         std::to_string(steps)};
  return runJob(
      args, job.train.epochs,
      [&](JobRunner& runner, RunObserver& observer) { return runner.run(job, job_path, observer); },
      options);
}

// `watch -- COMMAND`: a command of the user's as a job's ranks, followed as `run` follows one.
int watchCommand(const CliArgs& args) {
  noMoreThan(args, 1, "watch");
  const JobSpec job = watchedJob(args);
  return runJob(args, 0, [&](JobRunner& runner, RunObserver& observer) {
    return runner.run(job, "", observer);
  });
}

int runCommand(const CliArgs& args) {
  noMoreThan(args, 2, "run");
  const std::string& job_path = positional(args, 1, "job file");
  const JobSpec job = jobToRun(args, job_path);
  if (const auto refused = refuseIfTooBig(args, job)) return *refused;
  return runJob(args, runsCommand(job) ? 0 : job.train.epochs,
                [&](JobRunner& runner, RunObserver& observer) {
                  return runner.run(job, job_path, observer);
                });
}

// Where a resume of run `id` writes its checkpoints: beside run id's, named after it and the
// time, never a file that exists ("run.ckpt" -> "run.ckpt.resume-of-3-1764207000").
std::string resumedCheckpointPath(const std::string& checkpoint, int64_t id) {
  const std::string base =
      checkpoint + ".resume-of-" + std::to_string(id) + "-" + std::to_string(std::time(nullptr));
  std::string path = base;
  for (int n = 2; std::filesystem::exists(path); ++n) path = base + "-" + std::to_string(n);
  return path;
}

// A stored run's job again, from the checkpoint it wrote, as a new run; on another number
// of ranks (--ranks) it is an elastic resume.
int resumeCommand(const CliArgs& args) {
  noMoreThan(args, 2, "resume");
  const int64_t id = runIdAt(args, 1);
  RunStore store(args.db);
  const auto run = store.run(id);
  if (!run) throw std::runtime_error(args.db + ": no run with id " + std::to_string(id));
  const JobSpec stored = requireStoredJob(*run);
  const std::string& checkpoint = stored.train.checkpoint_path;
  if (checkpoint.empty()) {
    throw std::runtime_error("run " + std::to_string(id) +
                             " wrote no checkpoint (its job has no train.checkpoint_path): "
                             "there is nothing to resume from");
  }
  if (!std::filesystem::exists(checkpoint))
    throw std::runtime_error(checkpoint + ": run " + std::to_string(id) + "'s checkpoint is gone");
  // The resumed run's checkpoints are its own: writing them over run ID's would make the
  // next `resume ID` start later than this one did.
  const std::string own = resumedCheckpointPath(checkpoint, id);
  JobOverrides overrides = {"train.resume_from=" + nlohmann::json(checkpoint).dump(),
                            "train.checkpoint_path=" + nlohmann::json(own).dump()};
  const int world = args.ranks.value_or(stored.parallel.ranks);
  overrides.push_back("parallel.ranks=" + std::to_string(world));
  if (world != stored.parallel.ranks) overrides.push_back("train.elastic=true");
  overrides.insert(overrides.end(), args.overrides.begin(), args.overrides.end());
  JobSpec job = parseJob(run->job_toml, "run " + std::to_string(id) + "'s job", overrides);
  job.faults.clear();  // the faults a demo injected are history, not part of the job to go on
  if (const auto refused = refuseIfTooBig(args, job)) return *refused;
  if (!args.quiet && !args.json)
    std::cerr << "resuming run " << id << " from " << checkpoint
              << "; this run's checkpoints go to " << own << "\n";
  return runJob(args, job.train.epochs, [&](JobRunner& runner, RunObserver& observer) {
    return runner.run(job, run->job_path, observer);
  });
}

// `runs attach ID`: follows a run whose launcher still runs it; a Slurm run whose launcher
// is gone (marked lost) while its job still runs is taken over: this process becomes its
// launcher, as `run` is (Ctrl-C stops it with scancel).
int attachCommand(const CliArgs& args) {
  noMoreThan(args, 3, "runs attach");
  const int64_t id = runIdAt(args, 2);
  std::optional<RunRow> run;
  {
    RunStore store(args.db);
    run = store.run(id);
    if (!run || run->status != "lost" || run->scheduler_job.empty())
      return attachRun(store, args, id);
  }
  if (!args.quiet && !args.json)
    std::cerr << "run " << id << "'s launcher is gone and Slurm job " << run->scheduler_job
              << " may still run: taking it over\n";
  const JobSpec job = requireStoredJob(*run);
  return runJob(args, job.train.epochs, [&](JobRunner& runner, RunObserver& observer) {
    return runner.adopt(id, observer);
  });
}

bool opensStore(const std::string& command) {
  for (const char* c :
       {"run", "watch", "resume", "runs", "compare", "import", "analyze", "diff", "simulate"})
    if (command == c) return true;
  return false;
}

int dispatch(const CliArgs& args) {
  const std::string command = args.positional.empty() ? "help" : args.positional[0];
  if (opensStore(command)) requireOwnStore(args.db, args.allow_foreign_store);
  if (command == "run") return runCommand(args);
  if (command == "watch") return watchCommand(args);
  if (command == "resume") return resumeCommand(args);
  if (command == "validate") return validateCommand(args);
  if (command == "runs" && args.positional.size() > 1 && args.positional[1] == "attach")
    return attachCommand(args);
  if (command == "runs") return runsCommand(args);
  if (command == "compare") return compareCommand(args);
  if (command == "import") return importCommand(args);
  if (command == "analyze") return analyzeCommand(args);
  if (command == "diff") return diffCommand(args);
  if (command == "simulate") return args.live ? simulateLiveCommand(args) : simulateCommand(args);
  if (command == "calibrate") return calibrateCommand(args);
  if (command == "plan") return planCommand(args);
  if (command == "version") {
    std::cout << versionLine("ranklab") << "\n";
    return 0;
  }
  if (command == "help") {
    std::cout << usage();
    return 0;
  }
  throw UsageError("unknown command \"" + command +
                   "\" (allowed: run, watch, resume, validate, simulate, calibrate, plan, runs, "
                   "compare, import, "
                   "analyze, diff, bench, version)");
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  using namespace ranklab;
  // Whatever text from a file, a rank or the store a message carries, no control reaches the
  // terminal raw (issue 57, item 13).
  const EscapedStandardStreams escaped;
  try {
    // bench has options of its own; it never touches the run store.
    if (argc > 1 && std::string(argv[1]) == "bench") {
      try {
        return benchCommand(std::vector<std::string>(argv + 2, argv + argc), std::cout);
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
    }
    return dispatch(parseArgs(argc, argv));
  } catch (const UsageError& e) {
    std::cerr << "ranklab: " << e.what() << "\n\n" << usage();
    return 2;
  } catch (const JobError& e) {
    for (const auto& issue : e.issues()) std::cerr << issue.str() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ranklab: " << e.what() << "\n";
    return 1;
  }
}
