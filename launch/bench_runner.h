// Launcher side of `ranklab bench allreduce`: one mpirun per world size, each rank running
// `ranklab-worker --bench allreduce`, rank 0's result lines collected into rows.
#pragma once

#include <csignal>
#include <string>
#include <vector>

#include "engine/job/job_spec.h"
#include "launch/bench/allreduce_bench.h"

namespace ranklab {

struct BenchLaunch {
  std::vector<int> worlds{2, 4};
  AllreduceBenchOptions options;
  std::string worker_path;  // "" = ranklab-worker next to the running executable
  std::string mpirun = "mpirun";
  LaunchSpec placement;  // hosts and MCA parameters, as a job's [launch]
  // Set by a signal handler (Ctrl-C): stop the ranks, then throw. mpirun runs in a process
  // group of its own, so without this it outlives the CLI.
  const volatile std::sig_atomic_t* stop = nullptr;
};

// Throws std::runtime_error with mpirun's exit status and its last lines of output when a
// world fails or prints no rows.
std::vector<AllreduceBenchRow> runAllreduceBenchmark(const BenchLaunch& launch);

// Parses one line the worker printed; false when it is not a result row.
bool parseBenchRow(const std::string& line, AllreduceBenchRow& row);

}  // namespace ranklab
