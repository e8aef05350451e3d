// Timeline: the per-rank Gantt of phases for a window of steps of the run on the live
// page; past the rows that fit, a window of its ranks beside an overview of all of them. The steps
// come from the store (the window is asked for, never waited on); while a run is live and "follow"
// is on, the window follows its latest steps.
#pragma once

#include <QTimer>
#include <QWidget>

#include "views/models/timeline_data.h"
#include "views/run_store_reader.h"  // TimelineRequest

class QCheckBox;
class QLabel;
class QSpinBox;

namespace ranklab {

class LoadProgress;
class RankOverview;
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
  void setLatestStep(int64_t step);  // a live run moved on
  // The store reader's answers: how far the window's reading is, then the window laid out.
  void setProgress(qint64 run_id, int done, int of, const QString& stage);
  void setTimeline(const ranklab::TimelineRequest& request, const ranklab::TimelineData& data);
  void setFailed();  // the store reader could not answer: no longer waiting
  void showWindow(int64_t first_step, int count);

  TimelineView* view() const { return view_; }
  RankOverview* overview() const { return overview_; }
  QString ranksText() const;  // "ranks 0–57 of 1,024 …" while a window of the ranks shows
  int64_t runId() const { return run_id_; }
  // What the page says beside the view: the cap's line, or what is being read.
  QString statusText() const;
  bool loading() const;

 signals:
  void timelineRequested(const ranklab::TimelineRequest& request);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void request();
  void refine();  // the person zoomed or panned: lay the kept window's spans out for the view
  void wireRankWindow();
  void ranksMoved();  // the overview and the line follow the view's window of ranks

  TimelineView* view_;
  RankOverview* overview_;
  QLabel* title_;
  QSpinBox* first_;
  QSpinBox* count_;
  LoadProgress* progress_;
  QLabel* status_;
  QLabel* ranks_;
  QSpinBox* rank_;
  QCheckBox* follow_;
  QTimer refine_timer_;
  QTimer follow_timer_;
  int64_t run_id_ = 0;
  int64_t latest_step_ = -1;
  bool align_ = true;
  bool live_ = false;
  bool requested_ = false;  // a window was asked for since the run changed
  bool narrowed_ = false;   // the spans shown were chosen for a zoomed-in range
};

}  // namespace ranklab
