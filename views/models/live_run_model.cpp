#include "views/models/live_run_model.h"

#include <algorithm>
#include <cmath>

namespace ranklab {

namespace {

constexpr double kNsPerS = 1e9;

double seconds(int64_t ns) {
  return double(ns) / kNsPerS;
}

}  // namespace

LiveRunModel::LiveRunModel(QObject* parent) : QAbstractTableModel(parent) {}

void LiveRunModel::reset(int64_t run_id) {
  beginResetModel();
  run_id_ = run_id;
  ranks_.clear();
  windows_.clear();
  latest_eval_.reset();
  accuracy_points_.clear();
  endResetModel();
  emit updated();
}

void LiveRunModel::load(int64_t run_id, const std::vector<StepRow>& steps,
                        const std::vector<EvalRow>& evals) {
  beginResetModel();
  run_id_ = run_id;
  ranks_.clear();
  windows_.clear();
  latest_eval_.reset();
  accuracy_points_.clear();
  for (const StepRow& step : steps) {
    int row = rowOfRank(step.rank);
    if (row < 0) {
      row = rowForInsert(step.rank);
      RankProgress progress;
      progress.rank = step.rank;
      ranks_.insert(ranks_.begin() + row, std::move(progress));
      windows_.insert(windows_.begin() + row, RateWindow{});
    }
    accumulate(ranks_[row], windows_[row], step);
  }
  for (const EvalRow& eval : evals) accumulateEval(eval);
  endResetModel();
  emit updated();
}

void LiveRunModel::addStep(const StepRow& step) {
  int row = rowOfRank(step.rank);
  if (row < 0) {
    row = rowForInsert(step.rank);
    beginInsertRows({}, row, row);
    RankProgress progress;
    progress.rank = step.rank;
    ranks_.insert(ranks_.begin() + row, std::move(progress));
    windows_.insert(windows_.begin() + row, RateWindow{});
    endInsertRows();
  }
  accumulate(ranks_[row], windows_[row], step);
  emit dataChanged(index(row, 0), index(row, ColumnCount - 1), {Qt::DisplayRole});
  if (!batching_) emit updated();
}

void LiveRunModel::addSteps(const std::vector<StepRow>& steps) {
  batching_ = true;  // rows still insert and change one by one; updated() once at the end
  for (const StepRow& step : steps) addStep(step);
  batching_ = false;
  emit updated();
}

void LiveRunModel::addEval(const EvalRow& eval) {
  accumulateEval(eval);
  emit updated();
}

void LiveRunModel::accumulate(RankProgress& p, RateWindow& w, const StepRow& s) {
  p.epoch = s.epoch;
  p.step = s.step;
  p.loss = s.loss;
  p.samples += s.samples;
  p.compute_s += seconds(s.data_ns + s.forward_ns + s.backward_ns + s.compress_ns + s.update_ns);
  p.comm_s += seconds(s.comm_ns);
  p.wait_s += seconds(s.wait_ns);
  p.bytes_tx += s.bytes_tx;
  if (std::isfinite(s.loss)) p.loss_points.append(QPointF(double(s.step), s.loss));

  // Samples per second over the last kRateWindowS: the first point only marks the start.
  if (!w.points.empty()) w.samples_in += s.samples;
  w.points.emplace_back(s.time_ns, s.samples);
  const int64_t horizon = s.time_ns - int64_t(kRateWindowS * kNsPerS);
  while (w.points.size() > 2 && w.points[1].first <= horizon) {
    w.points.pop_front();
    w.samples_in -= w.points.front().second;
  }
  const int64_t span = w.points.back().first - w.points.front().first;
  if (span > 0) {
    p.samples_per_s = double(w.samples_in) / seconds(span);
  } else if (s.time_ns > 0) {
    p.samples_per_s = double(p.samples) / seconds(s.time_ns);  // first step: since rank start
  }
}

void LiveRunModel::accumulateEval(const EvalRow& eval) {
  latest_eval_ = eval;
  const QPointF point(double(eval.step), eval.test_accuracy);
  if (!accuracy_points_.isEmpty() && accuracy_points_.last().x() == point.x())
    accuracy_points_.last() = point;  // several ranks evaluated the same step
  else
    accuracy_points_.append(point);
}

int LiveRunModel::rowOfRank(int rank) const {
  auto it = std::lower_bound(ranks_.begin(), ranks_.end(), rank,
                             [](const RankProgress& p, int r) { return p.rank < r; });
  return it != ranks_.end() && it->rank == rank ? int(it - ranks_.begin()) : -1;
}

int LiveRunModel::rowForInsert(int rank) const {
  auto it = std::lower_bound(ranks_.begin(), ranks_.end(), rank,
                             [](const RankProgress& p, int r) { return p.rank < r; });
  return int(it - ranks_.begin());
}

int LiveRunModel::latestEpoch() const {
  int epoch = 0;
  for (const RankProgress& p : ranks_) epoch = std::max(epoch, p.epoch);
  return epoch;
}

int64_t LiveRunModel::latestStep() const {
  int64_t step = -1;
  for (const RankProgress& p : ranks_) step = std::max(step, p.step);
  return step;
}

double LiveRunModel::latestLoss() const {
  double sum = 0;
  int n = 0;
  for (const RankProgress& p : ranks_) {
    if (p.step < 0 || !std::isfinite(p.loss)) continue;
    sum += p.loss;
    ++n;
  }
  return n ? sum / n : 0.0;
}

double LiveRunModel::samplesPerSecond() const {
  double total = 0;
  for (const RankProgress& p : ranks_) total += p.samples_per_s;
  return total;
}

int LiveRunModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(ranks_.size());
}

int LiveRunModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant LiveRunModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const RankProgress& p = ranks_[index.row()];
  if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case RankColumn:
      return p.rank;
    case EpochColumn:
      return p.epoch;
    case StepColumn:
      return QVariant::fromValue<qlonglong>(p.step);
    case LossColumn:
      return p.loss;
    case SamplesPerSecondColumn:
      return p.samples_per_s;
    case ComputeColumn:
      return p.compute_s;
    case CommColumn:
      return p.comm_s;
    case WaitColumn:
      return p.wait_s;
  }
  return {};
}

QVariant LiveRunModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section;
  switch (section) {
    case RankColumn:
      return tr("rank");
    case EpochColumn:
      return tr("epoch");
    case StepColumn:
      return tr("step");
    case LossColumn:
      return tr("loss");
    case SamplesPerSecondColumn:
      return tr("samples/s");
    case ComputeColumn:
      return tr("compute s");
    case CommColumn:
      return tr("comm s");
    case WaitColumn:
      return tr("wait s");
  }
  return {};
}

}  // namespace ranklab
