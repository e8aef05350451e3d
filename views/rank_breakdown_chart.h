// Where each rank's time went over a run (ranklab analyze's breakdown): one stacked bar per
// rank of compute, exposed communication, waiting for the last rank, data loading and idle.
#pragma once

#include <vector>

#include "storage/analysis/analysis_results.h"
#include "views/rank_bars_chart.h"

namespace ranklab {

class RankBreakdownChart : public RankBarsChart {
  Q_OBJECT

 public:
  enum Part { kCompute, kComm, kWait, kData, kIdle };

  explicit RankBreakdownChart(QWidget* parent = nullptr);
  // The kinds of time, in Part order: their names and colours (the distribution's too).
  static std::vector<RankBarsChart::Part> kinds();

  void setBreakdown(const std::vector<RankBreakdown>& ranks);
};

}  // namespace ranklab
