// Analysis: any stored run (ranklab's own or imported) taken apart across its ranks, as
// `ranklab analyze` prints it: each rank's time by kind, the collectives' waiting against
// their transfer, the stragglers, and the critical path with its what-if. A live run's
// analysis is asked for again every few seconds while the page is shown.
#pragma once

#include <QTimer>
#include <QWidget>

#include "storage/analysis/analysis_results.h"

class QLabel;
class QTableWidget;

namespace ranklab {

class LoadProgress;
class RankBreakdownChart;

class AnalysisPage : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kLiveIntervalMs = 2000;
  // Stragglers listed, worst first: a thousand ranks' rows would say no more.
  static constexpr int kMaxStragglerRows = 20;

  explicit AnalysisPage(QWidget* parent = nullptr);

  void setRun(int64_t run_id, const QString& label, bool live);
  void setAnalysis(qint64 run_id, const ranklab::RunAnalysis& analysis);  // it arrived
  void setFailed();  // the store reader could not answer: no longer waiting
  bool loading() const;

  int64_t runId() const { return run_id_; }
  RankBreakdownChart* breakdownChart() const { return breakdown_; }
  QTableWidget* pathTable() const { return path_; }
  QTableWidget* stragglerTable() const { return stragglers_; }
  QTableWidget* collectiveTable() const { return collectives_; }

 signals:
  void analysisRequested(qint64 run_id);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void request();
  void fillPath(const RunAnalysis& analysis);
  void fillCollectives(const RunAnalysis& analysis);

  QLabel* title_;
  LoadProgress* progress_;  // busy while the run is analysed (on the store reader's thread)
  RankBreakdownChart* breakdown_;
  QTableWidget* path_;
  QLabel* what_if_;
  QTableWidget* collectives_;
  QTableWidget* stragglers_;
  QLabel* notes_;
  QTimer live_timer_;
  int64_t run_id_ = 0;
  bool live_ = false;
};

}  // namespace ranklab
