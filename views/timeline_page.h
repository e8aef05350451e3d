// Timeline: the per-rank Gantt of phases for a window of steps of the run on the live
// page. The steps come from the store (the window is asked for, never waited on); while a
// run is live and "follow" is on, the window follows its latest steps.
#pragma once

#include <QTimer>
#include <QWidget>

#include "views/models/timeline_data.h"

class QCheckBox;
class QLabel;
class QSpinBox;

namespace ranklab {

class TimelineView;

class TimelinePage : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kFollowIntervalMs = 1000;

  explicit TimelinePage(QWidget* parent = nullptr);

  // The run to show; align: it synchronises at every step. latest_step: -1 if unknown;
  // live: still running (its newest steps may not be stored yet).
  void setRun(int64_t run_id, const QString& label, bool align, int64_t latest_step,
              bool live = false);
  void setLatestStep(int64_t step);                         // a live run moved on
  void setSteps(int64_t run_id, const StepWindow& window);  // the window arrived
  void showWindow(int64_t first_step, int count);

  TimelineView* view() const { return view_; }
  int64_t runId() const { return run_id_; }

 signals:
  void windowRequested(qint64 run_id, qint64 first_step, qint64 last_step);
  void latestWindowRequested(qint64 run_id, int count);  // following a live run

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void request();

  TimelineView* view_;
  QLabel* title_;
  QSpinBox* first_;
  QSpinBox* count_;
  QCheckBox* follow_;
  QTimer follow_timer_;
  int64_t run_id_ = 0;
  int64_t latest_step_ = -1;
  bool align_ = true;
  bool live_ = false;
  bool requested_ = false;  // a window was asked for since the run changed
};

}  // namespace ranklab
