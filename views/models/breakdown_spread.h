// How each kind of time in `ranklab analyze`'s breakdown spreads across a run's ranks: its
// min, p10, median, p90 and max over the ranks and the ranks with the most. The analysis page
// draws this past kManyRanks ranks, where a bar per rank (or a mean per group of ranks, which
// hides the one slow rank among its neighbours) says nothing.
#pragma once

#include <array>
#include <vector>

#include "storage/analysis/analysis_results.h"

namespace ranklab {

struct PartSpread {
  double min = 0, p10 = 0, median = 0, p90 = 0, max = 0;  // seconds over the run
  int min_rank = -1;
  std::vector<int> most;  // the ranks with the most of it, most first (up to kMostRanks)
};

constexpr int kBreakdownParts = 5;  // compute, comm, wait, data, idle: RankBreakdownChart::Part
constexpr int kMostRanks = 3;

// Empty spreads (min_rank -1) when `ranks` is empty.
std::array<PartSpread, kBreakdownParts> breakdownSpread(const std::vector<RankBreakdown>& ranks);

// The part's seconds of one rank, in RankBreakdownChart::Part order.
double partSeconds(const RankBreakdown& rank, int part);

}  // namespace ranklab
