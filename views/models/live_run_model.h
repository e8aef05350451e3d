// One run's progress, rank by rank: loss curve, cumulative time per phase, latest step.
// Fed step by step while a run is live, or all at once when a stored run is reopened.
#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <QPointF>
#include <deque>
#include <optional>
#include <vector>

#include "storage/records.h"

namespace ranklab {

// What one rank has done so far.
struct RankProgress {
  int rank = 0;
  int epoch = 0;
  int64_t step = -1;  // -1: no step yet
  double loss = 0;    // latest
  int64_t samples = 0;
  double compute_s = 0;  // data + forward + backward + compress + update
  double comm_s = 0;
  double wait_s = 0;
  int64_t bytes_tx = 0;
  double samples_per_s = 0;    // over the live window
  QList<QPointF> loss_points;  // (step, loss); non-finite losses are left out
};

class LiveRunModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    RankColumn,
    EpochColumn,
    StepColumn,
    LossColumn,
    SamplesPerSecondColumn,
    ComputeColumn,
    CommColumn,
    WaitColumn,
    ColumnCount
  };
  // Throughput is measured over the last this-many seconds of each rank's steps.
  static constexpr double kRateWindowS = 5.0;

  explicit LiveRunModel(QObject* parent = nullptr);

  // Forgets everything; rows disappear. run_id 0: no run.
  void reset(int64_t run_id = 0);
  // A stored run in one go: a single model reset, no per-step signals.
  void load(int64_t run_id, const std::vector<StepRow>& steps, const std::vector<EvalRow>& evals);

  void setRunId(int64_t run_id) { run_id_ = run_id; }  // a live run's id arrives after launch
  void addStep(const StepRow& step);                   // a new rank's first step inserts its row
  void addSteps(const std::vector<StepRow>& steps);    // one updated() for the batch
  void addEval(const EvalRow& eval);

  int64_t runId() const { return run_id_; }
  int rankCount() const { return int(ranks_.size()); }
  const RankProgress& rankAt(int row) const { return ranks_.at(row); }
  int rowOfRank(int rank) const;  // -1 when that rank has sent nothing

  // Across ranks.
  int latestEpoch() const;
  int64_t latestStep() const;       // -1 before the first step
  double latestLoss() const;        // mean of each rank's latest loss
  double samplesPerSecond() const;  // sum of the ranks' windowed rates
  std::optional<EvalRow> latestEval() const { return latest_eval_; }
  const QList<QPointF>& testAccuracyPoints() const { return accuracy_points_; }  // (step, acc)

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 signals:
  // After any change (step, eval, reset, load): pages redraw from the model on their own clock.
  void updated();

 private:
  struct RateWindow {
    std::deque<std::pair<int64_t, int64_t>> points;  // (time_ns, samples of that step)
    int64_t samples_in = 0;                          // samples of every point but the first
  };
  int rowForInsert(int rank) const;
  void accumulate(RankProgress& progress, RateWindow& window, const StepRow& step);
  void accumulateEval(const EvalRow& eval);

  int64_t run_id_ = 0;
  bool batching_ = false;
  std::vector<RankProgress> ranks_;  // ordered by rank
  std::vector<RateWindow> windows_;  // parallel to ranks_
  std::optional<EvalRow> latest_eval_;
  QList<QPointF> accuracy_points_;
};

}  // namespace ranklab
