// Compare: two or more stored runs, their curves overlaid on one x-axis choice, the job
// settings that differ, and their summaries side by side. Runs are picked on the runs page
// ("Compare selected") or in the list here. A run something was predicted for (a simulated
// run of its job came before it) shows the prediction against its measure, phase by phase.
#pragma once

#include <QWidget>
#include <vector>

#include "storage/analysis/run_diff.h"
#include "views/models/compare_models.h"

class QComboBox;
class QHBoxLayout;
class QSplitter;
class QLabel;
class QListWidget;
class QTableView;
class QTableWidget;

namespace ranklab {

class CurveChart;
class RunsTableModel;

class ComparePage : public QWidget {
  Q_OBJECT

 public:
  explicit ComparePage(RunsTableModel* runs, QWidget* parent = nullptr);

  void setRuns(std::vector<ComparedRun> runs);   // what the store reader loaded
  void checkRuns(const QList<qint64>& run_ids);  // tick them in the list
  // Two runs' step times split by rank and phase (ranklab diff); `error` when there is none.
  void setDiff(const ranklab::RunDiff& diff, const QString& error);

  CurveChart* chart() const { return chart_; }
  static constexpr int kParetoKey = -2;  // the front's curve in chart() (runs: their ids)
  SettingsDiffModel* settingsModel() const { return settings_; }
  SummaryCompareModel* summaryModel() const { return summary_; }
  QTableView* settingsView() const { return settings_view_; }
  QTableWidget* diffTable() const { return diff_table_; }
  PredictionCompareModel* predictionModel() const { return prediction_; }
  QTableView* predictionView() const { return prediction_view_; }

 signals:
  void compareRequested(const QList<qint64>& run_ids);
  void diffRequested(qint64 run_a, qint64 run_b);  // two runs are compared

 private:
  QWidget* buildRunPicker();
  QHBoxLayout* buildChartControls();
  QSplitter* buildTables();
  QWidget* buildDiffBox();
  QWidget* buildPredictionBox();
  void showPredictions();
  void refillRunList();
  void redraw();
  void drawTradeoff();

  RunsTableModel* runs_;
  std::vector<ComparedRun> compared_;
  SettingsDiffModel* settings_;
  SummaryCompareModel* summary_;
  QListWidget* run_list_;
  QComboBox* metric_;
  QComboBox* x_axis_;
  CurveChart* chart_;
  QTableView* settings_view_;
  QTableView* summary_view_;
  QLabel* settings_note_;
  QWidget* diff_box_;
  QLabel* diff_note_;
  QTableWidget* diff_table_;
  PredictionCompareModel* prediction_;
  QWidget* prediction_box_;
  QLabel* prediction_note_;
  QTableView* prediction_view_;
};

}  // namespace ranklab
