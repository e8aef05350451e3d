// One run, rank by rank: a table of the ranks (state, step, loss, throughput, time per
// step by kind) over a RunSeries that also holds the curves the live page draws. Fed in
// batches while a run is live, or swapped in whole when a stored run was read elsewhere.
#pragma once

#include <QAbstractTableModel>
#include <optional>
#include <vector>

#include "storage/records.h"
#include "views/models/run_series.h"

namespace ranklab {

class LiveRunModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    RankColumn,
    HostColumn,  // where Open MPI placed it; rows of one host share a tint
    StateColumn,
    EpochColumn,
    StepColumn,
    LossColumn,
    SamplesPerSecondColumn,
    ComputeColumn,  // ms per step: data + forward + backward + compress + update
    CommColumn,
    WaitColumn,
    SentColumn,    // MB sent in all
    MemoryColumn,  // MB held: parameters, gradients, optimizer state, activations
    ColumnCount
  };
  enum Role { StateRole = Qt::UserRole, StragglerRole };

  explicit LiveRunModel(QObject* parent = nullptr);

  void reset(int64_t run_id = 0);  // rows disappear
  // A stored run, built off the UI thread: one model reset, no per-step signals.
  void load(int64_t run_id, RunSeries series);

  void setRunId(int64_t run_id) { run_id_ = run_id; }  // a live run's id arrives after launch
  void setWorld(int world) { series_.setWorld(world); }
  void setSimulated(bool simulated) { series_.setSimulated(simulated); }  // before its steps
  void addStep(const StepRow& step);
  void addSteps(const std::vector<StepRow>& steps);  // one dataChanged and updated()
  void addEval(const EvalRow& eval);
  void addEvent(const EventRow& event);  // marked on the charts (RunSeries::addEvent)
  void addServerLoad(const ServerLoadRow& load);
  void setRank(const RankRow& rank);
  void setRanks(const std::vector<RankRow>& ranks);  // one dataChanged and updated()
  void finish(const std::string& status);
  void rollBack(int64_t step);  // a restart from the checkpoint at `step` (RunSeries::rollBack)

  int64_t runId() const { return run_id_; }
  const RunSeries& series() const { return series_; }
  int rankCount() const { return int(series_.ranks().size()); }
  const RankSeries& rankAt(int row) const { return series_.ranks().at(size_t(row)); }
  // The rows of the ranks that train: once any rank has stepped, those that have (a
  // parameter server's ranks step never); every row before.
  std::vector<int> trainingRows() const;
  int rowOfRank(int rank) const { return series_.rowOfRank(rank); }
  // 0 for the first host down the grid, +1 at each row whose host differs from the last.
  int hostIndex(int row) const;

  // Across ranks.
  int latestEpoch() const;
  int64_t latestStep() const;       // -1 before the first step
  double latestLoss() const;        // mean of each rank's latest finite loss
  double samplesPerSecond() const;  // sum of the ranks' recent rates
  std::optional<EvalPoint> latestEval() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  static QColor stateColour(RankState state);

 signals:
  // After any change: pages redraw from the model on their own clock.
  void updated();

 private:
  QVariant trainingText(const RankSeries& r, int column) const;  // epoch, step, loss, samples/s
  void insertStep(const StepRow& step);
  // The rank's row, inserted where its number puts it (and told to the views) if it has none
  // yet: whatever names a rank first — a step, its rank row, or an event (a followed run's
  // stored events come before its ranks) — must not add a row the views did not hear of.
  void ensureRow(int rank);
  void announceChanges();

  int64_t run_id_ = 0;
  RunSeries series_;
  // hostIndex() of each row, built on first ask after the rows or their hosts changed: the
  // grid asks for every row's tint, and counting from row 0 each time is quadratic.
  mutable std::vector<int> host_index_;
};

}  // namespace ranklab
