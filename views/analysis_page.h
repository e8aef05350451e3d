// Analysis: any stored run (ranklab's own or imported) taken apart across its ranks, as
// `ranklab analyze` prints it: each rank's time by kind (a bar per rank, or past kManyRanks
// the distribution across ranks), the collectives' waiting against their transfer, the
// critical path with its what-if, and paged, sortable tables of the stragglers (chronic or
// moving), of every rank's time, and of the ranks behind in a run that did not finish. A live
// run's analysis is asked for again every few seconds while the page is shown.
#pragma once

#include <QTimer>
#include <QWidget>

#include "storage/analysis/analysis_results.h"

class QLabel;
class QStackedWidget;
class QTabWidget;
class QTableWidget;

namespace ranklab {

class BreakdownSpreadChart;
class LoadProgress;
class PagedRowsModel;
class PagedTable;
class RankBreakdownChart;

class AnalysisPage : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kLiveIntervalMs = 2000;
  enum Tab { StragglersTab, RanksTab, BehindTab };

  explicit AnalysisPage(QWidget* parent = nullptr);

  void setRun(int64_t run_id, const QString& label, bool live);
  void setAnalysis(qint64 run_id, const ranklab::RunAnalysis& analysis);  // it arrived
  void setFailed();  // the store reader could not answer: no longer waiting
  bool loading() const;

  int64_t runId() const { return run_id_; }
  RankBreakdownChart* breakdownChart() const { return breakdown_; }
  BreakdownSpreadChart* spreadChart() const { return spread_; }
  bool showsSpread() const;  // the distribution, not a bar per rank
  QTableWidget* pathTable() const { return path_; }
  QTableWidget* collectiveTable() const { return collectives_; }
  PagedTable* stragglerTable() const { return stragglers_; }
  PagedTable* rankTable() const { return ranks_; }
  PagedTable* behindTable() const { return behind_; }
  QTabWidget* tables() const { return tables_; }

 signals:
  void analysisRequested(qint64 run_id);
  void analysisShown(qint64 run_id);  // its answer is on the page

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void request();
  QWidget* buildTables();
  void showBreakdown(const RunAnalysis& analysis);
  void fillPath(const RunAnalysis& analysis);
  void fillCollectives(const RunAnalysis& analysis);
  void fillRankTables(const RunAnalysis& analysis);
  void fillBehind(const RunAnalysis& analysis);

  QLabel* title_;
  LoadProgress* progress_;  // busy while the run is analysed (on the store reader's thread)
  QStackedWidget* breakdown_stack_;
  RankBreakdownChart* breakdown_;
  BreakdownSpreadChart* spread_;
  QTableWidget* path_;
  QLabel* what_if_;
  QTableWidget* collectives_;
  QTabWidget* tables_;
  PagedTable* stragglers_;
  PagedTable* ranks_;
  QLabel* behind_note_;
  PagedTable* behind_;
  QLabel* notes_;
  QTimer live_timer_;
  int64_t run_id_ = 0;
  int64_t behind_shown_for_ = 0;  // the run whose ranks behind were put in front
  bool live_ = false;
};

}  // namespace ranklab
