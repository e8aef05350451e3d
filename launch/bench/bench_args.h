// `ranklab-worker --bench allreduce ...`: the options the launcher passes to each rank of
// a benchmark, as argv words, and back.
#pragma once

#include <string>
#include <vector>

#include "launch/bench/allreduce_bench.h"

namespace ranklab {

std::vector<std::string> benchArgs(const AllreduceBenchOptions& options);

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> splitCommaList(const std::string& text);

// Throws std::invalid_argument naming the option and what it takes.
AllreduceBenchOptions parseBenchArgs(const std::vector<std::string>& args);

// Runs the benchmark on this rank; rank 0 prints one JSON line per row on stdout.
int runBenchRank(Communicator& comm, const std::vector<std::string>& args);

}  // namespace ranklab
