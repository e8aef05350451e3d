// A rank × step heat-map of a run of many ranks, as plain data: each cell one metric over a
// band of ranks and a span of steps. A band of ranks shows its worst rank's value (a slow
// rank must not be averaged away among 30 others) and names that rank; a span of steps is
// the mean over the rank's samples in it. Built from the ranks' bounded curves, so a
// 4,096-rank run costs O(ranks × (samples + columns)) a redraw, whatever its length.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "views/models/run_series.h"

namespace ranklab {

// Work: the step's time less its wait, where a synchronous run's slow rank stands out (every
// rank's step takes as long; the slow one waits least).
enum class HeatMetric { WorkMs, StepMs, WaitMs, SentMB, kCount };
const char* heatMetricName(HeatMetric metric);  // "work per step (ms)", …
// Where a high value is good (bytes sent): the worst of a band is then its lowest.
bool heatLowIsWorse(HeatMetric metric);

// The rows' order: by rank, or the ranks of each host together (host by host, in order of
// their first rank).
enum class HeatOrder { ByRank, ByHost };

struct HeatWindow {
  int64_t first_step = 0, last_step = -1;  // last < first: the run's whole length
  int first_row = 0, rows = -1;            // of the ordered ranks; -1: all of them
};

struct HeatMapGrid {
  static constexpr float kEmpty = std::numeric_limits<float>::quiet_NaN();
  int columns = 0, rows = 0;
  int64_t first_step = 0, last_step = -1;  // the steps the columns cover
  double steps_per_column = 1;
  std::vector<int> order;  // row indices of RunSeries::ranks() in drawing order (all of them)
  int first_row = 0, row_count = 0;  // the window of `order` drawn
  double ranks_per_row = 1;
  std::vector<float> values;     // rows × columns, row-major; kEmpty where no rank had a step
  std::vector<int> worst_ranks;  // the rank each cell's value is of (-1 where empty)
  float low = 0, high = 0;       // the colour scale: the 2nd and 98th percentiles of the cells
  // Where each host's ranks begin, as rows of `order` (ByHost only), with its name.
  std::vector<std::pair<int, std::string>> host_starts;

  float at(int row, int column) const {
    return values[size_t(row) * size_t(columns) + size_t(column)];
  }
  int rankAt(int row, int column) const {
    return worst_ranks[size_t(row) * size_t(columns) + size_t(column)];
  }
  // The steps and the ranks' window rows a cell covers.
  int64_t columnFirstStep(int column) const;
  int64_t columnLastStep(int column) const;
  int rowFirst(int row) const;  // index into `order`
  int rowLast(int row) const;
};

// At most `columns` × `rows` cells (fewer when the window has fewer steps or ranks).
HeatMapGrid buildHeatMap(const RunSeries& run, HeatMetric metric, HeatOrder order,
                         const HeatWindow& window, int columns, int rows);

// The rows of RunSeries::ranks() in the order's sequence.
std::vector<int> heatOrder(const RunSeries& run, HeatOrder order);

}  // namespace ranklab
