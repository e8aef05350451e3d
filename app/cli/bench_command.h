// `ranklab bench allreduce`: busbw of every all-reduce algorithm for sizes and worlds.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "launch/bench/allreduce_bench.h"

namespace ranklab {

// args: everything after "bench". Prints the table (or JSON) on `out`; returns the exit
// status (1 when a result failed its check). Throws std::invalid_argument on bad options.
int benchCommand(const std::vector<std::string>& args, std::ostream& out);

// One line per (world, size), a busbw column per algorithm, and each other algorithm's busbw
// over the reference's (mpi: its registry entry says so) where the reference ran, headed
// "ring/mpi", "shm/mpi", "hiera/mpi" (the name's first 5 letters).
void printBenchTable(std::ostream& out, const std::vector<AllreduceBenchRow>& rows,
                     const std::vector<std::string>& algorithms);

}  // namespace ranklab
