// Draws a TimelineData: one row per rank, one coloured bar per phase, evaluations and
// checkpoints as hatched boxes, a time axis in ms.
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

 signals:
  void viewMoved();  // a zoom, a pan or a fit changed the range shown

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;

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
  double xOf(double ms) const;
  double msOf(double x) const;
  int rowTop(int row) const;
  int rowHeight() const;

  TimelineData data_;
  double view_begin_ = 0, view_end_ = 1;
  bool dragging_ = false;
  QPoint last_drag_;
};

}  // namespace ranklab
