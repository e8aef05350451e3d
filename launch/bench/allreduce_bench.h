// The rank side of `ranklab bench allreduce`, nccl-tests style: for each size, warm up,
// time batches of all-reduces, report algbw = S/t and busbw = algbw * 2(n-1)/n, then
// verify each algorithm's result in the same run. Algorithms take turns batch by batch and
// the best batch counts, so a burst of load on a shared machine hits them alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/collectives/allreduce_registry.h"
#include "comm/communicator.h"

namespace ranklab {

struct AllreduceBenchOptions {
  std::vector<std::string> algorithms = allreduceAlgorithms();  // every registered one
  size_t min_bytes = 4;
  size_t max_bytes = size_t{64} << 20;  // sizes double from min to max
  int ranks_per_host = 0;               // for hierarchical
  double seconds_per_size = 0.1;        // timed batch length to aim for
  int repeats = 3;                      // batches per algorithm and size; the best counts
};

struct AllreduceBenchRow {
  std::string algorithm;
  int world = 1;
  size_t bytes = 0;
  int iterations = 0;
  double seconds = 0;    // per all-reduce, slowest rank, best batch
  double algbw_gbs = 0;  // bytes / seconds, GB/s (1e9)
  double busbw_gbs = 0;  // algbw * 2(n-1)/n
  bool verified = false;
  double max_error = 0;  // largest |result - expected| over the buffer
  std::string path;      // how the algorithm moved this size (Allreduce::pathFor)
  // The world's floor: one way of a cache line between ranks 0 and 1 through shared
  // memory, half the best round trip; 0 where they share no memory.
  double floor_seconds = 0;
};

// Collective over `comm`; every rank returns the same rows.
std::vector<AllreduceBenchRow> runAllreduceBench(Communicator& comm,
                                                 const AllreduceBenchOptions& options);

// One row as a JSON object on one line (what the worker prints, the CLI parses).
std::string benchRowJson(const AllreduceBenchRow& row);

}  // namespace ranklab
