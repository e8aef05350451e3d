// Where each rank's step time goes: one stacked horizontal bar per rank, one segment per
// phase (data, forward, backward, compress, wait, comm, update), in ms per step.
#pragma once

#include "views/rank_bars_chart.h"

namespace ranklab {

class LiveRunModel;

class TimeBreakdownChart : public RankBarsChart {
  Q_OBJECT

 public:
  explicit TimeBreakdownChart(QWidget* parent = nullptr);

  void refresh(const LiveRunModel& model);
  QBarSet* phaseSet(int phase) const { return partSet(phase); }
};

}  // namespace ranklab
