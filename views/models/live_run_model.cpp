#include "views/models/live_run_model.h"

#include <QBrush>
#include <QColor>
#include <algorithm>
#include <cmath>

#include "views/models/compression_text.h"

namespace ranklab {

namespace {

// Wire bytes against what the same collectives would have sent uncompressed.
QString sentTip(const RankSeries& r) {
  const QString sent = QObject::tr("%1 MB sent").arg(double(r.bytes_tx) / 1e6, 0, 'f', 1);
  if (!compressionRatio(r.bytes_raw, r.bytes_tx)) return sent + QObject::tr(", uncompressed");
  return sent + QObject::tr(" of %1 MB uncompressed (%2)")
                    .arg(double(r.bytes_raw) / 1e6, 0, 'f', 1)
                    .arg(compressionText(r.bytes_raw, r.bytes_tx));
}

QString memoryTip(const RankSeries& r) {
  auto mb = [](int64_t bytes) { return QString::number(double(bytes) / 1e6, 'f', 1); };
  return QObject::tr(
             "held: parameters %1 MB, gradients %2 MB, optimizer state %3 MB, "
             "activations %4 MB, one-layer scratch %5 MB")
      .arg(mb(r.mem_params), mb(r.mem_grads), mb(r.mem_optimizer), mb(r.mem_activations),
           mb(r.mem_buffers));
}

}  // namespace

LiveRunModel::LiveRunModel(QObject* parent) : QAbstractTableModel(parent) {}

void LiveRunModel::reset(int64_t run_id) {
  beginResetModel();
  run_id_ = run_id;
  series_ = RunSeries();
  host_index_.clear();
  endResetModel();
  emit updated();
}

void LiveRunModel::load(int64_t run_id, RunSeries series) {
  beginResetModel();
  run_id_ = run_id;
  series_ = std::move(series);
  host_index_.clear();
  endResetModel();
  emit updated();
}

void LiveRunModel::ensureRow(int rank) {
  if (rank < 0 || series_.rowOfRank(rank) >= 0) return;
  int row = 0;
  while (row < rankCount() && rankAt(row).rank < rank) ++row;
  beginInsertRows({}, row, row);
  series_.addRank(rank);
  host_index_.clear();
  endInsertRows();
}

void LiveRunModel::insertStep(const StepRow& step) {
  ensureRow(step.rank);
  series_.addStep(step);
}

void LiveRunModel::announceChanges() {
  series_.updateStates();
  if (rankCount() > 0) emit dataChanged(index(0, 0), index(rankCount() - 1, ColumnCount - 1));
  emit updated();
}

void LiveRunModel::addStep(const StepRow& step) {
  insertStep(step);
  announceChanges();
}

void LiveRunModel::addSteps(const std::vector<StepRow>& steps) {
  for (const StepRow& step : steps) insertStep(step);
  announceChanges();
}

void LiveRunModel::addEval(const EvalRow& eval) {
  series_.addEval(eval);
  emit updated();
}

void LiveRunModel::addEvent(const EventRow& event) {
  ensureRow(event.rank);  // the views hear of the row before the series files the event by it
  const size_t before = series_.events().size();
  series_.addEvent(event);
  if (event.kind == "quiet" || event.kind == "heard") {
    announceChanges();  // the rank's state says so at once: no step may follow
    return;
  }
  if (series_.events().size() != before) emit updated();
}

std::vector<int> LiveRunModel::trainingRows() const {
  const auto& ranks = series_.ranks();
  const bool any =
      std::any_of(ranks.begin(), ranks.end(), [](const auto& r) { return r.steps > 0; });
  std::vector<int> rows;
  for (int row = 0; row < rankCount(); ++row)
    if (!any || ranks[size_t(row)].steps > 0) rows.push_back(row);
  return rows;
}

void LiveRunModel::addServerLoad(const ServerLoadRow& load) {
  series_.addServerLoad(load);
  emit updated();
}

void LiveRunModel::setRanks(const std::vector<RankRow>& ranks) {
  std::vector<int> missing;
  for (const RankRow& rank : ranks)
    if (rank.rank >= 0 && series_.rowOfRank(rank.rank) < 0) missing.push_back(rank.rank);
  if (missing.size() > 1) {  // a thousand hellos: one reset, not a thousand row insertions
    beginResetModel();
    for (int rank : missing) series_.addRank(rank);
    endResetModel();
  }
  for (const RankRow& rank : ranks) {
    ensureRow(rank.rank);
    series_.setRank(rank);
  }
  host_index_.clear();  // a host may be new
  announceChanges();
}

void LiveRunModel::setRank(const RankRow& rank) {
  setRanks({rank});
}

void LiveRunModel::rollBack(int64_t step) {
  series_.rollBack(step);
  announceChanges();
}

void LiveRunModel::finish(const std::string& status) {
  series_.finish(status);
  announceChanges();
}

int LiveRunModel::latestEpoch() const {
  int epoch = 0;
  for (const RankSeries& r : series_.ranks()) epoch = std::max(epoch, r.epoch);
  return epoch;
}

int64_t LiveRunModel::latestStep() const {
  int64_t step = -1;
  for (const RankSeries& r : series_.ranks()) step = std::max(step, r.step);
  return step;
}

double LiveRunModel::latestLoss() const {
  double sum = 0;
  int n = 0;
  for (const RankSeries& r : series_.ranks()) {
    if (r.step < 0 || !std::isfinite(r.loss)) continue;
    sum += r.loss;
    ++n;
  }
  return n ? sum / n : 0.0;
}

double LiveRunModel::samplesPerSecond() const {
  double total = 0;
  for (const RankSeries& r : series_.ranks()) total += r.samples_per_s;
  return total;
}

std::optional<EvalPoint> LiveRunModel::latestEval() const {
  if (series_.evals().empty()) return std::nullopt;
  return series_.evals().back();
}

int LiveRunModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : rankCount();
}

int LiveRunModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QColor LiveRunModel::stateColour(RankState state) {
  switch (state) {
    case RankState::Starting:
      return QColor(0xe0, 0xe0, 0xe0);
    case RankState::Running:
      return QColor(0xc8, 0xe6, 0xc9);
    case RankState::Waiting:
      return QColor(0xff, 0xf3, 0xc4);
    case RankState::Straggling:
      return QColor(0xff, 0xb7, 0x4d);
    case RankState::Silent:
      return QColor(0xd1, 0xa3, 0xe0);
    case RankState::Failed:
      return QColor(0xef, 0x9a, 0x9a);
    case RankState::Done:
      return QColor(0xbb, 0xde, 0xfb);
  }
  return Qt::white;
}

int LiveRunModel::hostIndex(int row) const {
  if (host_index_.size() != size_t(rankCount())) {
    host_index_.assign(size_t(rankCount()), 0);
    for (int r = 1; r < rankCount(); ++r)
      host_index_[size_t(r)] = host_index_[size_t(r - 1)] + (rankAt(r).host != rankAt(r - 1).host);
  }
  return host_index_.at(size_t(row));
}

QVariant LiveRunModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const int row = index.row();
  const RankSeries& r = rankAt(row);
  const auto ms = series_.phaseMeansMs(row);
  switch (role) {
    case StateRole:
      return int(r.state);
    case StragglerRole:
      return r.straggler;
    case Qt::BackgroundRole:
      if (index.column() == StateColumn) return QBrush(stateColour(r.state));
      if (index.column() == HostColumn && hostIndex(row) % 2 == 1)
        return QBrush(QColor(0xe8, 0xea, 0xf6));  // every other host tinted
      return {};
    case Qt::ToolTipRole:
      if (index.column() == SentColumn) return sentTip(r);
      if (index.column() == MemoryColumn) return memoryTip(r);
      if (index.column() == StateColumn && r.lost_messages > 0)
        return tr("%1 telemetry messages from rank %2 never arrived: the launcher could not "
                  "keep up and the rank's spool overflowed; their steps are missing")
            .arg(r.lost_messages)
            .arg(r.rank);
      if (r.straggler) return QString::fromStdString(series_.stragglerReason());
      return QString::fromStdString(r.host);
    case Qt::TextAlignmentRole:
      if (index.column() == StateColumn) return QVariant::fromValue(Qt::AlignCenter);
      return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::DisplayRole:
      break;
    default:
      return {};
  }
  switch (index.column()) {
    case RankColumn:
      return r.rank;
    case HostColumn:
      return QString::fromStdString(r.host);
    case StateColumn: {
      QString text = QString::fromLatin1(stateName(r.state));
      if (r.straggler && r.state != RankState::Straggling) text += tr(" · straggler");
      if (r.lost_messages > 0) text += tr(" · %1 lost").arg(r.lost_messages);
      return text;
    }
    case EpochColumn:
    case StepColumn:
    case LossColumn:
    case SamplesPerSecondColumn:
      return trainingText(r, index.column());
    case ComputeColumn:
      return QString::number(ms[dataPhase] + ms[forwardPhase] + ms[backwardPhase] +
                                 ms[compressPhase] + ms[updatePhase],
                             'f', 2);
    case CommColumn:
      return QString::number(ms[commPhase], 'f', 2);
    case WaitColumn:
      return QString::number(ms[waitPhase], 'f', 2);
    case SentColumn: {
      const QString sent = QString::number(double(r.bytes_tx) / 1e6, 'f', 1);
      if (!compressionRatio(r.bytes_raw, r.bytes_tx)) return sent;
      return sent + QStringLiteral(" · ") + compressionText(r.bytes_raw, r.bytes_tx);
    }
    case MemoryColumn:
      return QString::number(double(r.memoryBytes()) / 1e6, 'f', 1);
  }
  return {};
}

// A parameter server's rank takes no steps: "server" and dashes, not step -1 and loss 0.
QVariant LiveRunModel::trainingText(const RankSeries& r, int column) const {
  const bool server = std::any_of(series_.shards().begin(), series_.shards().end(),
                                  [&](const ShardLoad& s) { return s.rank == r.rank; });
  if (server && r.steps == 0) return column == StepColumn ? tr("server") : QStringLiteral("–");
  switch (column) {
    case EpochColumn:
      return r.epoch;
    case StepColumn:
      return QVariant::fromValue<qlonglong>(r.step);
    case LossColumn:  // a run without any loss (a simulated one): a dash, not "nan"
      return series_.hasLoss() ? QString::number(r.loss, 'f', 4) : QStringLiteral("–");
    default:
      return QString::number(r.samples_per_s, 'f', 0);
  }
}

QVariant LiveRunModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section;
  switch (section) {
    case RankColumn:
      return tr("rank");
    case HostColumn:
      return tr("host");
    case StateColumn:
      return tr("state");
    case EpochColumn:
      return tr("epoch");
    case StepColumn:
      return tr("step");
    case LossColumn:
      return tr("loss");
    case SamplesPerSecondColumn:
      return tr("samples/s");
    case ComputeColumn:
      return tr("compute ms/step");
    case CommColumn:
      return tr("comm ms/step");
    case WaitColumn:
      return tr("wait ms/step");
    case SentColumn:
      return tr("sent MB");
    case MemoryColumn:
      return tr("memory MB");
  }
  return {};
}

}  // namespace ranklab
