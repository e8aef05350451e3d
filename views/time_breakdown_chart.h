// Where each rank's step time goes: one stacked horizontal bar per rank, one segment per
// phase (data, forward, backward, compress, wait, comm, update), in ms per step.
#pragma once

#include <QChartView>
#include <array>
#include <vector>

#include "views/models/run_series.h"

class QBarCategoryAxis;
class QBarSet;
class QHorizontalStackedBarSeries;
class QValueAxis;

namespace ranklab {

class LiveRunModel;

class TimeBreakdownChart : public QChartView {
  Q_OBJECT

 public:
  explicit TimeBreakdownChart(QWidget* parent = nullptr);

  void clear();
  void refresh(const LiveRunModel& model);

  int barCount() const { return int(ranks_.size()); }
  // Bars run bottom-up, ranks top-down: the bar index of the model's row (also for tests).
  static int barOfRow(int row, int rows) { return rows - 1 - row; }
  QBarSet* phaseSet(int phase) const { return sets_.at(size_t(phase)); }

 private:
  QHorizontalStackedBarSeries* series_;
  std::array<QBarSet*, kPhaseCount> sets_;
  QBarCategoryAxis* rank_axis_;
  QValueAxis* ms_axis_;
  std::vector<int> ranks_;  // bar i shows ranks_[i]
};

}  // namespace ranklab
