// The live page's rank × step heat-map for a run of many ranks: one metric (own work, time,
// waiting or bytes a step) coloured from the run's 2nd to 98th percentile, ranks down, steps
// across. The wheel zooms the steps around the pointer (Shift+wheel: the ranks), a
// double-click shows everything again; hovering names the rank, its host and the steps; a
// click chooses the rank (rankChosen). Ranks may be grouped by host.
#pragma once

#include <QImage>
#include <QWidget>

#include "views/models/heat_map_grid.h"

class QComboBox;

namespace ranklab {

class RankHeatMap : public QWidget {
  Q_OBJECT

 public:
  explicit RankHeatMap(QWidget* parent = nullptr);

  void refresh(const RunSeries& run);  // redraws from the run's curves
  void clear();
  void setMetric(HeatMetric metric);
  void setOrder(HeatOrder order);
  HeatMetric metric() const { return metric_; }
  const HeatMapGrid& grid() const { return grid_; }
  // The cell under a point of the widget: the rank whose value it shows (-1: none), and
  // its tooltip's text.
  int rankAt(const QPoint& at) const;
  QString describe(const QPoint& at) const;
  QRect plotRect() const;
  // Zooms the steps (or, `ranks`, the rows) by `factor` (< 1: in) around a point in it.
  void zoom(const QPoint& around, double factor, bool ranks);
  void showAll();
  bool zoomed() const { return window_.last_step >= window_.first_step || window_.rows >= 0; }
  QSize sizeHint() const override { return {900, 300}; }
  QSize minimumSizeHint() const override { return {400, 220}; }

 signals:
  void rankChosen(int rank);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;

 private:
  void rebuild();  // the grid and its image, from the last run given
  bool cellAt(const QPoint& at, int& row, int& column) const;
  void paintAxes(QPainter& p, const QRect& plot) const;
  void paintLegend(QPainter& p, const QRect& plot) const;

  QComboBox* metric_choice_;
  QComboBox* order_choice_;
  const RunSeries* run_ = nullptr;  // the model's, while it is shown
  HeatMetric metric_ = HeatMetric::WorkMs;
  HeatOrder order_ = HeatOrder::ByRank;
  HeatWindow window_;
  HeatMapGrid grid_;
  QImage image_;
  int chosen_rank_ = -1;
};

// The colour of a value on the scale [0, 1]: pale yellow (low) through orange to dark red
// (high), readable in grey print.
QColor heatColour(double t);

}  // namespace ranklab
