// The CLI's command line: positional words and the options every command shares.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/job/job_file.h"
#include "engine/job/job_spec.h"

namespace ranklab {

// A mistake on the command line: printed with the usage text, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CliArgs {
  std::vector<std::string> positional;
  std::string db;
  std::string csv;    // runs export: the step rows' file to write
  std::string trace;  // runs export: the Chrome trace file to write
  // runs export --trace: only steps FIRST..LAST (--step-range) of these ranks (--rank-list)
  std::optional<std::pair<int64_t, int64_t>> step_range;
  std::vector<int> rank_list;
  std::string text_from;  // run: the job's text from this file; JOB.toml only names it
  std::string worker;     // ranklab-worker; "" = beside this executable
  std::string name;       // import: the run's name
  bool json = false;
  bool quiet = false;
  bool verbose = false;  // run: every rank's set-up events and the per-group, per-layer tables
  bool allow_foreign_store = false;  // open a store another account owns
  bool ignore_memory = false;        // run, validate: --ignore-memory-estimate
  std::optional<int> ranks;  // unset: the job file's; any given value goes to the job's check
  // simulate, plan, calibrate (docs/plan.md)
  std::optional<int64_t> steps;  // simulate: steps to simulate (unset: the job's epochs)
  std::string calibration;       // plan, simulate: this calibration file instead of this machine's
  std::string export_path;       // calibrate: write the calibration there too
  std::optional<double> memory_per_rank;  // plan: bytes a rank may hold
  std::optional<int> top;                 // plan: candidates shown
  std::optional<int> run_top;             // plan --run K: the top K run for real
  bool measure_all = false;               // calibrate --all: measure again what is stored
  bool live = false;                      // simulate --live: sent through the collector
  std::optional<double> seconds;          // simulate --live: for this long (steps x rate)
  std::optional<int> nproc;               // watch: the command's ranks
  std::vector<std::string> command;       // watch: every word after "--"
  JobOverrides overrides;
};

CliArgs parseArgs(int argc, char** argv);

// positional[i], or a UsageError naming `what`.
const std::string& positional(const CliArgs& args, size_t i, const char* what);
// positional[i] as a run id.
int64_t runIdAt(const CliArgs& args, size_t i);
// A UsageError naming the first word past the `count` that `command` takes.
void noMoreThan(const CliArgs& args, size_t count, const std::string& command);

}  // namespace ranklab
