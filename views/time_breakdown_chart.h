// Where each rank's time went: stacked horizontal bars of cumulative compute,
// communication and wait seconds, one bar per rank.
#pragma once

#include <QChartView>
#include <vector>

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
  QBarSet* computeSet() const { return compute_; }
  QBarSet* commSet() const { return comm_; }
  QBarSet* waitSet() const { return wait_; }

 private:
  QHorizontalStackedBarSeries* series_;
  QBarSet* compute_;
  QBarSet* comm_;
  QBarSet* wait_;
  QBarCategoryAxis* rank_axis_;
  QValueAxis* seconds_axis_;
  std::vector<int> ranks_;  // bar i shows ranks_[i]
};

}  // namespace ranklab
