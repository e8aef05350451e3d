// The two tables of the compare page: the job settings that differ between the runs (one
// row per key, one column per run), and their summaries side by side (one row per metric).
#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <QPointF>
#include <QStringList>
#include <optional>
#include <utility>
#include <vector>

#include "storage/analysis/step_measure.h"
#include "storage/records.h"
#include "views/models/run_series.h"

namespace ranklab {

// A run's "prediction" event beside the run's own step by the same measure (the slowest
// rank's median step, per phase): what the simulator said against what the run did.
struct PredictedAgainstMeasured {
  PredictedStep predicted;
  MeasuredStep measured;
};

// What the compare page holds of one run.
struct ComparedRun {
  RunRow run;
  RunSeries series;
  std::optional<PredictedAgainstMeasured> prediction;  // none: nothing was predicted for it
};

QString runLabel(const RunRow& run);  // "run 12 · quickstart"

// A run as a point of the communication/accuracy trade-off: x the MB each rank sent over the
// whole run (mean of the ranks), y its last test accuracy in %; none without an evaluation.
std::optional<QPointF> tradeoffPoint(const RunSeries& series);
// The points no other point beats on both counts (as few or fewer MB and as high or higher
// accuracy, one of them strictly), ordered by MB: the Pareto front.
QList<QPointF> paretoFront(const QList<QPointF>& points);

class SettingsDiffModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  explicit SettingsDiffModel(QObject* parent = nullptr);
  // Keys are read from each run's resolved job (job_toml); a key a run's file lacks counts
  // as its default.
  void setRuns(const std::vector<ComparedRun>& runs);
  QStringList differingKeys() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QStringList runs_;               // column titles
  std::vector<QStringList> rows_;  // key, then one value per run
};

class SummaryCompareModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  explicit SummaryCompareModel(QObject* parent = nullptr);
  void setRuns(const std::vector<ComparedRun>& runs);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  static QStringList metricNames();
  static QString spreadText(std::vector<std::pair<double, int>> values);
  QStringList metrics_;              // row titles
  QStringList runs_;                 // column titles
  std::vector<QStringList> values_;  // [metric][run]
};

// Predicted against measured for the compared runs that have a prediction: a row for the
// step and one per phase, three columns per such run (predicted ms, measured ms, the signed
// error (predicted - measured) / measured; "–" for a phase under 1 % of the measured step).
// Phases neither side spent time in are left out.
class PredictionCompareModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  explicit PredictionCompareModel(QObject* parent = nullptr);
  void setRuns(const std::vector<ComparedRun>& runs);
  bool empty() const { return runs_.empty(); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    QString name;
    std::vector<std::pair<double, double>> values;  // per run: predicted s, measured s
  };
  bool errorShown(const QModelIndex& index) const;

  std::vector<std::pair<int64_t, int64_t>> runs_;  // run, its simulated run
  std::vector<Row> rows_;
};

}  // namespace ranklab
