// Draws a TimelineData: one row per rank, one coloured bar per phase, evaluations and
// checkpoints as hatched boxes, a time axis in ms. More ranks than rows of kMinRowHeight fit
// show as a window of consecutive ranks (Shift+wheel, showRank, or the page's overview move
// it), not as rows too thin to read or cut off at the bottom.
// Wheel zooms around the pointer, dragging pans, hovering shows the bar's durations.
#pragma once

#include <QRectF>
#include <QWidget>
#include <utility>
#include <vector>

#include "views/models/timeline_data.h"

class QPainter;

namespace ranklab {

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kMinRowHeight = 14;  // a rank's label still reads
  static constexpr int kLegendHeight = 28;  // phase colours on top of the plot
  static constexpr int kAxisHeight = 44;    // ticks and the axis title below it

  explicit TimelineView(QWidget* parent = nullptr);

  void setData(TimelineData data, bool keep_view = false);
  const TimelineData& data() const { return data_; }
  void fit();                                 // the whole window of steps
  void zoom(double factor, double anchor_x);  // > 1 zooms in, around a widget x
  void pan(double dx_pixels);
  double viewBeginMs() const { return view_begin_; }
  double viewEndMs() const { return view_end_; }
  const TimelineBar* barAt(const QPoint& point) const;  // nullptr: none there
  QString describeAt(const QPoint& point) const;
  QRect plotRect() const;
  // The window of ranks: rows firstRow() .. firstRow() + rowsShown() - 1 of data().ranks.
  int rowsShown() const;
  int firstRow() const { return first_row_; }
  void setFirstRow(int row);  // clamped so the window stays full
  bool showRank(int rank);    // the window around it; false when the data has no such rank

 signals:
  void viewMoved();  // a zoom, a pan or a fit changed the range shown
  void rowsMoved();  // the window of ranks moved, or the data's ranks changed

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;  // as many rows as now fit

 private:
  void drawSpans(QPainter& painter) const;
  static void hatchUnion(QPainter& painter,
                         const std::vector<std::pair<QRectF, const QString*>>& boxes);
  void drawMarks(QPainter& painter) const;
  void drawHops(QPainter& painter) const;
  void drawDevice(QPainter& painter) const;
  void drawLegend(QPainter& painter) const;
  void drawBars(QPainter& painter) const;
  // The rectangle of an interval on a rank's row, at least min_px wide.
  QRectF boxOf(int rank, double start_ms, double end_ms, double min_px) const;
  int rankAt(const QPoint& point) const;  // the rank of the row under point, -1: none
  int rowOf(int rank) const;              // the row a rank is drawn in
  bool rowShown(int row) const;
  double xOf(double ms) const;
  double msOf(double x) const;
  int rowTop(int row) const;
  int rowHeight() const;

  TimelineData data_;
  double view_begin_ = 0, view_end_ = 1;
  int first_row_ = 0;
  bool dragging_ = false;
  QPoint last_drag_;
};

}  // namespace ranklab
