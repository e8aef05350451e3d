// ranklab: run, validate and inspect distributed training jobs from a terminal.
#include <csignal>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/bench_command.h"
#include "app/cli/progress_printer.h"
#include "app/cli/report_format.h"
#include "app/core/job_runner.h"
#include "engine/job/job_spec.h"
#include "storage/run_store.h"

namespace ranklab {
namespace {

constexpr const char* kUsage = R"(usage: ranklab <command> [options]

commands:
  run JOB.toml [--ranks N] [--set section.key=value ...]   launch a job, store it, print its summary
  validate JOB.toml [--set section.key=value ...]          check a job file without launching
  runs list                                                every stored run, newest first
  runs show ID                                             one run's summary
  runs delete ID                                           remove a run and all its rows
  bench allreduce [--worlds 2,4] [--algorithms ring,mpi,hierarchical,shm] [--min-bytes 4]
        [--max-bytes 64M] [--ranks-per-host N] [--repeats 3]  all-reduce busbw per size, checked

options for every command:
  --db PATH   run store file (default: $XDG_DATA_HOME/ranklab/runs.db or ~/.local/share/ranklab/runs.db)
  --json      machine-readable output on stdout
  --quiet     (run) no per-second progress, only errors
)";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CliArgs {
  std::vector<std::string> positional;
  std::string db;
  bool json = false;
  bool quiet = false;
  std::optional<int> ranks;  // unset: the job file's; any given value goes to the job's check
  JobOverrides overrides;
};

CliArgs parseArgs(int argc, char** argv) {
  CliArgs args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(a + " needs a value");
      return argv[++i];
    };
    if (a == "--db")
      args.db = value();
    else if (a == "--json")
      args.json = true;
    else if (a == "--quiet")
      args.quiet = true;
    else if (a == "--set")
      args.overrides.push_back(value());
    else if (a == "--ranks") {
      const std::string n = value();
      size_t used = 0;
      try {
        args.ranks = std::stoi(n, &used);
      } catch (const std::exception&) {
      }
      if (used == 0 || used != n.size())
        throw UsageError("--ranks: \"" + n + "\" is not a number (allowed: 1..256)");
    } else if (a == "-h" || a == "--help")
      args.positional.insert(args.positional.begin(), "help");
    else if (a.rfind("--", 0) == 0)
      throw UsageError("unknown option " + a);
    else
      args.positional.push_back(a);
  }
  if (args.db.empty()) args.db = RunStore::defaultPath();
  return args;
}

const std::string& positional(const CliArgs& args, size_t i, const char* what) {
  if (args.positional.size() <= i) throw UsageError(std::string("missing ") + what);
  return args.positional[i];
}

int64_t runId(const CliArgs& args) {
  const std::string& text = positional(args, 2, "run ID");
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    throw UsageError("run ID \"" + text + "\" is not a number");
  }
}

JobSpec loadWithOverrides(const CliArgs& args) {
  JobOverrides overrides = args.overrides;
  if (args.ranks) overrides.push_back("parallel.ranks=" + std::to_string(*args.ranks));
  return loadJob(positional(args, 1, "job file"), overrides);
}

int validateCommand(const CliArgs& args) {
  const JobSpec job = loadWithOverrides(args);
  if (args.json) {
    std::cout << nlohmann::json{{"valid", true}, {"name", job.name}}.dump(2) << "\n";
  } else {
    std::cout << positional(args, 1, "job file") << ": valid (" << job.parallel.ranks << " ranks, "
              << job.parallel.strategy << "/" << job.parallel.algorithm << ")\n";
  }
  return 0;
}

JobRunner* g_active_runner = nullptr;

// Ctrl-C stops the ranks cleanly (then forcibly) and still stores what they reported.
void stopOnSignal(int) {
  if (g_active_runner != nullptr) g_active_runner->requestStop();
}

int runCommand(const CliArgs& args) {
  const JobSpec job = loadWithOverrides(args);
  LaunchOptions options;
  options.db_path = args.db;
  JobRunner runner(options);
  g_active_runner = &runner;
  std::signal(SIGINT, stopOnSignal);
  std::signal(SIGTERM, stopOnSignal);
  ProgressPrinter printer(job.train.epochs, args.quiet);
  const RunOutcome outcome = runner.run(job, positional(args, 1, "job file"), printer);
  RunStore store(args.db);
  const auto summary = store.summary(outcome.run_id);
  if (!summary) {
    throw std::runtime_error(args.db + ": run " + std::to_string(outcome.run_id) +
                             " is gone from the store (was the file deleted during the run?)");
  }
  if (args.json)
    std::cout << summaryJson(*summary).dump(2) << "\n";
  else
    printSummary(std::cout, *summary);
  if (!outcome.error.empty())
    std::cerr << "run " << outcome.run_id << " failed: " << outcome.error << "\n";
  return outcome.status == "done" ? 0 : 1;
}

int runsCommand(const CliArgs& args) {
  const std::string& verb = positional(args, 1, "runs verb (list, show, delete)");
  RunStore store(args.db);
  if (verb == "list") {
    const auto runs = store.listRuns();
    if (args.json) {
      auto list = nlohmann::json::array();
      for (const auto& r : runs) list.push_back(runRowJson(r));
      std::cout << list.dump(2) << "\n";
    } else {
      printRunList(std::cout, runs);
    }
    return 0;
  }
  const int64_t id = runId(args);
  if (verb == "show") {
    const auto summary = store.summary(id);
    if (!summary) throw std::runtime_error(args.db + ": no run with id " + std::to_string(id));
    if (args.json)
      std::cout << summaryJson(*summary).dump(2) << "\n";
    else
      printSummary(std::cout, *summary);
    return 0;
  }
  if (verb == "delete") {
    store.deleteRun(id);
    if (!args.json) std::cout << "deleted run " << id << "\n";
    return 0;
  }
  throw UsageError("unknown runs verb \"" + verb + "\" (allowed: list, show, delete)");
}

int dispatch(const CliArgs& args) {
  const std::string command = args.positional.empty() ? "help" : args.positional[0];
  if (command == "run") return runCommand(args);
  if (command == "validate") return validateCommand(args);
  if (command == "runs") return runsCommand(args);
  if (command == "help") {
    std::cout << kUsage;
    return 0;
  }
  throw UsageError("unknown command \"" + command + "\" (allowed: run, validate, runs, bench)");
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  using namespace ranklab;
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
    std::cerr << "ranklab: " << e.what() << "\n\n" << kUsage;
    return 2;
  } catch (const JobError& e) {
    for (const auto& issue : e.issues()) std::cerr << issue.str() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ranklab: " << e.what() << "\n";
    return 1;
  }
}
