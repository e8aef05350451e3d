// `ranklab diff A B`: how run B's steps differ in length from run A's, split by rank and
// phase along each run's critical path (critical_path.h), over the steps both recorded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/run_store.h"

namespace ranklab {

struct DiffPart {
  int rank = -1;  // -1: every rank at once (a collective's transfer)
  std::string phase;
  double delta_s = 0;  // B's time on the path minus A's
};

struct RunDiff {
  int64_t run_a = 0, run_b = 0;
  int64_t steps = 0;            // step numbers every rank of both runs recorded
  double a_s = 0, b_s = 0;      // the steps' span on each run's clock (CriticalPath::span_s)
  double total_delta_s = 0;     // b_s - a_s
  std::vector<DiffPart> parts;  // largest change first
  double parts_sum_s = 0;       // what the parts add up to (the paths' difference)
};

// Throws naming the store for a missing run, and naming both runs when they share no step.
RunDiff diffRuns(RunStore& store, int64_t run_a, int64_t run_b);

}  // namespace ranklab
