// A strip beside the timeline of a run of many ranks: every rank, top to bottom, coloured by
// its own work in the window of steps (a pixel row holding several ranks shows the most of
// them, so one slow rank among a thousand stays seen), the ranks the timeline shows
// bracketed. A click or a drag moves the timeline's window of ranks there.
#pragma once

#include <QWidget>
#include <vector>

namespace ranklab {

class RankOverview : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kWidth = 22;
  explicit RankOverview(QWidget* parent = nullptr);

  void setRanks(std::vector<int> ranks, std::vector<double> own_ms);  // same order
  void setWindow(int first_row, int rows);
  int rowAt(int y) const;  // the row of data's ranks under a y, clamped
  // "ranks 770–779: own work up to 124.0 ms (rank 777)"
  QString describeAt(int y) const;

  QSize sizeHint() const override { return {kWidth, 200}; }

 signals:
  void rowChosen(int row);  // centre the window there

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  double yOfRow(int row) const;

  std::vector<int> ranks_;
  std::vector<double> own_ms_;
  int first_row_ = 0, rows_ = 0;
};

}  // namespace ranklab
