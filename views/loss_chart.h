// Training loss per rank: one line per rank, x = step, y = loss, axes follow the data.
#pragma once

#include <QChartView>
#include <vector>

class QLineSeries;
class QValueAxis;

namespace ranklab {

class LiveRunModel;

class LossChart : public QChartView {
  Q_OBJECT

 public:
  explicit LossChart(QWidget* parent = nullptr);

  void clear();  // no series: the model was reset
  // Draws what the model has that this chart has not drawn yet.
  void refresh(const LiveRunModel& model);

  int seriesCount() const { return int(lines_.size()); }
  QLineSeries* seriesForRank(int rank) const;  // nullptr when absent

 private:
  struct Line {
    int rank;
    QLineSeries* series;
    qsizetype drawn;  // points of the model's list already appended
  };
  Line& lineFor(int rank);
  void fitAxes();

  QValueAxis* x_axis_;
  QValueAxis* y_axis_;
  std::vector<Line> lines_;  // ordered by rank
  double max_step_ = 0;
  double min_loss_ = 0;
  double max_loss_ = 0;
  bool has_points_ = false;
};

}  // namespace ranklab
