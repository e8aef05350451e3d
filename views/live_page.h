// The run page: a status line, the loss chart and the time breakdown of one run, live or
// stored. Draws what its LiveRunModel holds, at most ten times a second.
#pragma once

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include "views/models/live_run_model.h"

class QLabel;

namespace ranklab {

class LossChart;
class TimeBreakdownChart;

class LivePage : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kRedrawIntervalMs = 100;

  explicit LivePage(QWidget* parent = nullptr);

  // The model to draw (not owned); switching redraws from scratch.
  void setModel(LiveRunModel* model);
  LiveRunModel* model() const { return model_; }
  // First part of the status line, e.g. "run 12 · quickstart · running".
  void setHeadline(const QString& headline);

  void refreshNow();  // draw pending changes at once (before a screenshot)

  LossChart* lossChart() const { return loss_; }
  TimeBreakdownChart* timeChart() const { return time_; }
  QString statusText() const;  // plain text of the status line

 private:
  void scheduleRedraw();
  void updateStatus();

  QPointer<LiveRunModel> model_;
  QMetaObject::Connection updated_connection_;
  QMetaObject::Connection reset_connection_;
  QLabel* status_;
  LossChart* loss_;
  TimeBreakdownChart* time_;
  QTimer redraw_timer_;
  QString headline_;
  QString status_plain_;  // the status line without markup
};

}  // namespace ranklab
