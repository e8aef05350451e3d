// The candidates of `ranklab plan --json`: one row per layout in the plan's ranked order, its
// predicted step, throughput and peak memory against the limit, and what dominates its step.
// No widgets: the Plan page draws it, sorted through a proxy on SortRole.
#pragma once

#include <QAbstractTableModel>
#include <QByteArray>
#include <QString>
#include <QStringList>
#include <vector>

namespace ranklab {

// One candidate as the plan printed it.
struct PlannedLayout {
  int rank = 0;  // 1 = the plan's first choice
  int ranks = 0, data = 0, pipeline = 0, tensor = 0, zero = 0, microbatches = 0;
  QString schedule;
  bool sequence_parallel = false;
  QStringList overrides;    // "parallel.pipeline=2", ...: make this layout from the job
  double step_s = 0;        // predicted time per step
  double sample_s = 0;      // predicted time per training sample (the plan's ranking)
  double memory_bytes = 0;  // largest rank's ledger
  double peak_bytes = 0;    // estimated peak of the largest rank, process and data included
  bool fits = true;
  QString dominant;  // "compute", "exposed comm", "bubble" or "wait"
  double compute_s = 0, exposed_comm_s = 0, bubble_s = 0, wait_s = 0;
};

struct Plan {
  std::vector<PlannedLayout> candidates;
  double memory_limit_bytes = 0;
  int layouts = 0;  // every layout predicted (the candidates are its top)
  QString calibration;
};

// Reads the plan's stdout; false and `error` (naming what is missing) when it is not a plan.
bool parsePlanJson(const QByteArray& json, Plan* plan, QString* error);

class PlanTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    RankColumn,
    LayoutColumn,
    StepColumn,
    SamplesPerSecondColumn,
    MemoryColumn,  // the peak, drawn as a bar against the limit
    FitsColumn,
    DominantColumn,
    ComputeColumn,
    CommColumn,
    BubbleColumn,
    WaitColumn,
    ColumnCount
  };
  enum Role {
    SortRole = Qt::UserRole,  // a number in every column (the layout's column: its rank)
    MemoryFractionRole,       // the peak over the limit (> 1: does not fit); 0 without a limit
    OverridesRole,            // the candidate's --set overrides, a QStringList
  };

  explicit PlanTableModel(QObject* parent = nullptr);

  void setPlan(Plan plan);
  void clear() { setPlan({}); }
  const Plan& plan() const { return plan_; }
  const PlannedLayout& candidateAt(int row) const { return plan_.candidates.at(row); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  // "data 2 · pipeline 2 (1f1b, 4 micro) · ZeRO 1": the parts that are not 1 or off.
  static QString layoutText(const PlannedLayout& c);

 private:
  QVariant display(const PlannedLayout& c, int column) const;
  QVariant sortValue(const PlannedLayout& c, int column) const;
  QString toolTip(const PlannedLayout& c, int column) const;

  Plan plan_;
};

}  // namespace ranklab
