// The live monitor for one run, running or stored: loss per rank and their mean, test
// accuracy, time per step by phase, bandwidth per rank, loss scale and staleness when the
// run uses them, the rank grid with each rank's state (the straggler flagged), and the
// run's output. Draws what its LiveRunModel holds, on its own clock (kRedrawIntervalMs).
#pragma once

#include <QElapsedTimer>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include "views/curve_chart.h"
#include "views/models/live_run_model.h"
#include "views/models/redraw_pacer.h"

class QComboBox;
class QLabel;
class QSlider;
class QTableView;

namespace ranklab {

class CurveChart;
class LogModel;
class LogPane;
class MemoryChart;
class ActivationsChart;
class RankHeatMap;
class StuckPanel;
class ShardChart;
class TimeBreakdownChart;

class LivePage : public QWidget {
  Q_OBJECT

 public:
  // Each tick redraws one group of charts (loss; bandwidth; the rest), so no single stall
  // paints everything: a group is at most 3 ticks behind the data. Ticks are this far apart
  // at least, and further while the UI thread would otherwise work more than
  // kUiCpuShare of the time (RedrawPacer), up to kSlowestRedrawMs.
  static constexpr int kRedrawIntervalMs = 70;
  static constexpr int kSlowestRedrawMs = 1000;
  static constexpr double kUiCpuShare = 0.05;
  static constexpr int kGridRowsMeasured = 64;  // rows the rank grid sizes its columns by

  explicit LivePage(LogModel* log, QWidget* parent = nullptr);

  // The model to draw (not owned); switching redraws from scratch.
  void setModel(LiveRunModel* model);
  LiveRunModel* model() const { return model_; }
  // First part of the status line, e.g. "run 12 · quickstart · running".
  void setHeadline(const QString& headline);

  void refreshNow();  // draw pending changes at once (before a screenshot)
  void setXAxis(XAxis axis);
  void setSmoothing(double weight);  // 0..0.99
  XAxis xAxis() const { return x_axis_; }
  double smoothing() const { return smoothing_; }

  CurveChart* lossChart() const { return loss_; }
  CurveChart* accuracyChart() const { return accuracy_; }
  CurveChart* bandwidthChart() const { return bandwidth_; }
  // Runs of many ranks only (RunSeries::manyRanks): the spread of time per step and of wait.
  CurveChart* stepTimeChart() const { return step_time_; }
  CurveChart* waitChart() const { return wait_; }
  CurveChart* lossScaleChart() const { return scale_; }
  CurveChart* stalenessChart() const { return staleness_; }
  CurveChart* gradNormChart() const { return norm_; }
  CurveChart* learningRateChart() const { return lr_; }
  TimeBreakdownChart* timeChart() const { return time_; }
  MemoryChart* memoryChart() const { return memory_; }
  ActivationsChart* activationsChart() const { return activations_; }
  ShardChart* shardChart() const { return shards_; }
  QTableView* rankGrid() const { return grid_; }
  RankHeatMap* heatMap() const { return heat_map_; }  // runs of many ranks
  StuckPanel* stuckPanel() const { return stuck_; }   // while a rank is silent or behind
  // Scrolls the rank grid to `rank` and selects its row (a heat-map or stuck-panel click).
  void showRank(int rank);
  // Right-click on a rank of a running run offers these (kill, stop, continue, slow): the same
  // as requestFault.
  void setFaultsEnabled(bool on) { faults_enabled_ = on; }
  void requestFault(int rank, const QString& action) { emit faultRequested(rank, action); }

 signals:
  void faultRequested(int rank, const QString& action);

 public:
  LogPane* logPane() const { return log_pane_; }
  QString statusText() const;  // plain text of the status line
  QWidget* chartsArea() const { return charts_; }

  static constexpr int kGlobalKey = kMeanKey;  // the mean-of-ranks curve's key in lossChart()
  // bandwidthChart(): received = rank + this; past any rank number (an import has 1,000 and more)
  static constexpr int kReceivedKeyOffset = 1 << 24;

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  QWidget* buildControls();
  void layOutCharts();
  void showRankMenu(const QPoint& at);
  void scheduleRedraw();
  // Drawn one group a timer tick, so that no tick holds the event loop long: at 1,024 ranks
  // the spreads and the heat-map each cost tens of ms.
  enum ChartGroup { LossGroup, BandwidthGroup, SpreadGroup, HeatMapGroup, OtherGroup, kGroupCount };
  void drawCharts(int group);  // -1: every group
  std::vector<ChartMark> eventMarks(const RunSeries& run) const;
  void refreshRates(const RunSeries& run, const std::vector<ChartMark>& marks);
  void drawEvaluations(const RunSeries& run, const std::vector<ChartMark>& marks);
  void drawPerRank(const RunSeries& run, int group);  // a curve per rank (a few dozen at most)
  void drawSpreads(const RunSeries& run, int group);  // bands and the worst ranks
  QString lossText() const;
  QString lastArrivalText() const;
  void drawNextGroup();
  void updateStatus();
  QString xTitle() const;

  QPointer<LiveRunModel> model_;
  QMetaObject::Connection updated_connection_;
  QLabel* status_;
  QComboBox* x_choice_ = nullptr;
  QSlider* smoothing_slider_ = nullptr;
  QLabel* smoothing_label_ = nullptr;
  QWidget* charts_;
  CurveChart* loss_;
  CurveChart* accuracy_;
  TimeBreakdownChart* time_;
  MemoryChart* memory_;
  ActivationsChart* activations_;
  ShardChart* shards_;  // parameter server runs only
  CurveChart* bandwidth_;
  CurveChart* step_time_;
  CurveChart* wait_;
  CurveChart* scale_;
  CurveChart* staleness_;
  CurveChart* norm_;  // runs that measured their gradient's norm
  CurveChart* lr_;    // runs whose learning rate moved
  RankHeatMap* heat_map_;
  StuckPanel* stuck_;
  QTableView* grid_;
  bool faults_enabled_ = false;  // the model is the running run
  LogPane* log_pane_;
  QTimer redraw_timer_;
  RedrawPacer pacer_{kRedrawIntervalMs, kSlowestRedrawMs, kUiCpuShare};
  QElapsedTimer pace_clock_;
  bool dirty_ = false;      // changes arrived while the page was hidden
  quint64 generation_ = 0;  // bumped by every model update
  quint64 drawn_[kGroupCount] = {};
  int next_group_ = 0;
  QString headline_;
  QString status_plain_;
  XAxis x_axis_ = XAxis::Step;
  double smoothing_ = 0.6;
};

}  // namespace ranklab
