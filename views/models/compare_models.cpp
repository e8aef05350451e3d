#include "views/models/compare_models.h"

#include <QColor>
#include <QFont>
#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>

#include "engine/job/job_file.h"
#include "engine/job/job_key_relevance.h"
#include "engine/job/job_keys.h"
#include "engine/job/pipeline_bubble.h"
#include "engine/job/stored_job.h"
#include "storage/run_origin.h"
#include "views/models/compression_text.h"

namespace ranklab {

std::optional<QPointF> tradeoffPoint(const RunSeries& series) {
  if (series.evals().empty() || series.ranks().empty()) return std::nullopt;
  // A diverged run has no place on the trade-off (nor on its front): its accuracy means
  // nothing once the loss is NaN or inf.
  if (!std::isfinite(series.evals().back().loss)) return std::nullopt;
  double sent = 0;
  for (const RankSeries& r : series.ranks()) sent += double(r.bytes_tx);
  const double mb = sent / double(series.ranks().size()) / 1e6;
  return QPointF(mb, series.evals().back().accuracy * 100.0);
}

QList<QPointF> paretoFront(const QList<QPointF>& points) {
  QList<QPointF> front;
  for (const QPointF& p : points) {
    const bool beaten = std::any_of(points.begin(), points.end(), [&p](const QPointF& q) {
      return q.x() <= p.x() && q.y() >= p.y() && (q.x() < p.x() || q.y() > p.y());
    });
    if (!beaten && !front.contains(p)) front.append(p);
  }
  std::sort(front.begin(), front.end(),
            [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
  return front;
}

QString runLabel(const RunRow& run) {
  return QObject::tr("run %1 · %2").arg(run.id).arg(QString::fromStdString(run.name));
}

namespace {

// The stored job's [parallel] section; nullopt for a run stored without its job.
std::optional<ParallelSpec> parallelOf(const RunRow& run) {
  const StoredJob stored = storedJobOf(run);
  if (!stored.job) return std::nullopt;
  return stored.job->parallel;
}

// "2 × 1 × 1 · ZeRO 3": data × pipeline × tensor ranks, and the ZeRO stage when there is one.
QString layoutText(const std::optional<ParallelSpec>& p) {
  if (!p) return QStringLiteral("–");
  const int data = p->ranks / (p->pipeline * p->tensor);
  QString text = QStringLiteral("%1 × %2 × %3").arg(data).arg(p->pipeline).arg(p->tensor);
  if (p->zero > 0) text += QObject::tr(" · ZeRO %1").arg(p->zero);
  return text;
}

// Measured bubble with (p − 1)/(m + p − 1) beside it; "–" without a pipeline.
QString bubbleText(const std::optional<ParallelSpec>& p, double mean_wait_s, double train_s) {
  if (!p || p->pipeline < 2 || train_s <= 0) return QStringLiteral("–");
  return QStringLiteral("%1 (%2)")
      .arg(measuredBubble(mean_wait_s, train_s), 0, 'f', 3)
      .arg(bubbleFormula(p->pipeline, p->microbatches), 0, 'f', 3);
}

}  // namespace

SettingsDiffModel::SettingsDiffModel(QObject* parent) : QAbstractTableModel(parent) {}

void SettingsDiffModel::setRuns(const std::vector<ComparedRun>& runs) {
  beginResetModel();
  runs_.clear();
  rows_.clear();
  // Only ranklab's own runs have job settings; an imported run's column says so.
  std::vector<std::string> jobs;
  for (const ComparedRun& r : runs) {
    runs_ << runLabel(r.run);
    if (originOf(r.run) != RunOrigin::kPytorchImport) jobs.push_back(r.run.job_toml);
  }
  if (jobs.size() > 1) {
    for (const SettingDifference& d : differingSettings(jobs)) {
      QStringList row{QString::fromStdString(d.path)};
      size_t next = 0;
      for (const ComparedRun& r : runs)
        row << (originOf(r.run) != RunOrigin::kPytorchImport
                    ? QString::fromStdString(d.values[next++])
                    : tr("(imported)"));
      rows_.push_back(row);
    }
  }
  endResetModel();
}

QStringList SettingsDiffModel::differingKeys() const {
  QStringList keys;
  for (const QStringList& row : rows_) keys << row.front();
  return keys;
}

int SettingsDiffModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(rows_.size());
}

int SettingsDiffModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() || runs_.isEmpty() ? 0 : int(runs_.size()) + 1;
}

QVariant SettingsDiffModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  if (role == Qt::DisplayRole) return rows_[size_t(index.row())].at(index.column());
  if (role == Qt::FontRole && index.column() == 0) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  return {};
}

QVariant SettingsDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  if (section == 0) return tr("setting");
  return section - 1 < runs_.size() ? QVariant(runs_.at(section - 1)) : QVariant();
}

SummaryCompareModel::SummaryCompareModel(QObject* parent) : QAbstractTableModel(parent) {}

// How a per-rank figure spreads across a run's ranks, to compare runs of any size side by
// side: "12.00 · 12.01 · 14.40 (rank 777)", the rank that has the most named.
QString SummaryCompareModel::spreadText(std::vector<std::pair<double, int>> values) {
  if (values.empty()) return QStringLiteral("–");
  std::sort(values.begin(), values.end());
  const auto at = [&](double q) {
    return values[size_t(std::lround(q * double(values.size() - 1)))];
  };
  return tr("%1 · %2 · %3 (rank %4)")
      .arg(at(0.5).first, 0, 'f', 2)
      .arg(at(0.9).first, 0, 'f', 2)
      .arg(values.back().first, 0, 'f', 2)
      .arg(values.back().second);
}

// The summaries' rows, top down.
QStringList SummaryCompareModel::metricNames() {
  return {tr("status"),
          tr("ranks"),
          tr("strategy"),
          tr("codec · precision"),
          tr("steps"),
          tr("wall time (s)"),
          tr("training time (s)"),
          tr("samples/s"),
          tr("final test accuracy"),
          tr("final training loss (mean of ranks)"),
          tr("MB sent (all ranks)"),
          tr("compression (raw / sent bytes)"),
          tr("compute ms/step (mean)"),
          tr("comm ms/step (mean)"),
          tr("wait ms/step (mean)"),
          tr("compute ms/step across ranks: median · p90 · max"),
          tr("wait ms/step across ranks: median · p90 · max"),
          tr("layout (data × pipeline × tensor)"),
          tr("pipeline bubble (formula)"),
          tr("memory held per rank, MB (largest)")};
}

void SummaryCompareModel::setRuns(const std::vector<ComparedRun>& runs) {
  beginResetModel();
  metrics_ = metricNames();
  runs_.clear();
  values_.assign(size_t(metrics_.size()), {});
  for (const ComparedRun& c : runs) {
    const RunRow& r = c.run;
    runs_ << runLabel(r);
    const std::optional<ParallelSpec> parallel = parallelOf(r);
    int64_t steps = 0, samples = 0, bytes = 0, raw_bytes = 0;
    double compute = 0, comm = 0, wait = 0, wait_s = 0;
    int64_t held = 0;
    int counted = 0;
    std::vector<std::pair<double, int>> compute_of, wait_of;  // ms/step, rank
    for (const RankSeries& rank : c.series.ranks()) {
      steps = std::max(steps, rank.steps);
      samples += rank.samples;
      bytes += rank.bytes_tx;
      raw_bytes += rank.bytes_raw;
      held = std::max(held, rank.memoryBytes());
      if (rank.steps == 0) continue;
      wait_s += rank.waitSeconds();
      compute += rank.computeSeconds() * 1e3 / double(rank.steps);
      comm += rank.commSeconds() * 1e3 / double(rank.steps);
      wait += rank.waitSeconds() * 1e3 / double(rank.steps);
      compute_of.emplace_back(rank.computeSeconds() * 1e3 / double(rank.steps), rank.rank);
      wait_of.emplace_back(rank.waitSeconds() * 1e3 / double(rank.steps), rank.rank);
      ++counted;
    }
    const auto& global = c.series.global().samples();
    const double final_loss = global.empty() || !global.back().loss_count
                                  ? 0
                                  : global.back().loss_sum / double(global.back().loss_count);
    const auto& evals = c.series.evals();
    const QString n = QStringLiteral("%1");
    // PyTorch's traces record neither samples nor losses (docs/analysis.md).
    const bool imported = originOf(r) == RunOrigin::kPytorchImport;
    const QStringList column = {
        QString::fromStdString(r.status), QString::number(r.world),
        QString::fromStdString(r.strategy + (r.algorithm.empty() ? "" : "/" + r.algorithm)),
        QString::fromStdString(r.codec + " · " + r.amp), QString::number(steps),
        QString::number(r.wall_s, 'f', 2), QString::number(r.train_s, 'f', 2),
        imported        ? tr("not in the traces")
        : r.train_s > 0 ? QString::number(double(samples) / r.train_s, 'f', 0)
                        : QStringLiteral("–"),
        evals.empty() ? QStringLiteral("–")
        : !std::isfinite(evals.back().loss)
            ? tr("diverged (test loss not finite)")
            : n.arg(evals.back().accuracy * 100.0, 0, 'f', 2) + QStringLiteral(" %"),
        imported                               ? tr("not in the traces")
        : originOf(r) == RunOrigin::kSimulated ? tr("– (simulated: nothing trained)")
        : global.empty()                       ? QStringLiteral("–")
        : !global.back().loss_count            ? tr("not finite (diverged)")
                                               : QString::number(final_loss, 'f', 4),
        // A command's ranks (PyTorch, live) send through their backend: bytes not seen.
        r.strategy == "command" ? QStringLiteral("?")
                                : QString::number(double(bytes) / 1e6, 'f', 1),
        compressionText(raw_bytes, bytes),
        counted ? QString::number(compute / counted, 'f', 2) : QStringLiteral("–"),
        counted ? QString::number(comm / counted, 'f', 2) : QStringLiteral("–"),
        counted ? QString::number(wait / counted, 'f', 2) : QStringLiteral("–"),
        spreadText(compute_of), spreadText(wait_of), layoutText(parallel),
        bubbleText(parallel, counted ? wait_s / counted : 0, r.train_s),
        held > 0 ? QString::number(double(held) / 1e6, 'f', 1) : QStringLiteral("–")};
    for (qsizetype m = 0; m < metrics_.size(); ++m) values_[size_t(m)] << column.at(m);
  }
  endResetModel();
}

int SummaryCompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || runs_.isEmpty() ? 0 : int(metrics_.size());
}

int SummaryCompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(runs_.size());
}

QVariant SummaryCompareModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  if (role == Qt::DisplayRole) return values_[size_t(index.row())].at(index.column());
  if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant SummaryCompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Horizontal)
    return section < runs_.size() ? QVariant(runs_.at(section)) : QVariant();
  return section < metrics_.size() ? QVariant(metrics_.at(section)) : QVariant();
}

PredictionCompareModel::PredictionCompareModel(QObject* parent) : QAbstractTableModel(parent) {}

void PredictionCompareModel::setRuns(const std::vector<ComparedRun>& runs) {
  beginResetModel();
  runs_.clear();
  rows_.clear();
  std::vector<const PredictedAgainstMeasured*> checks;
  for (const ComparedRun& r : runs)
    if (r.prediction) {
      runs_.push_back({r.run.id, r.prediction->predicted.simulated_run});
      checks.push_back(&*r.prediction);
    }
  if (!checks.empty()) {
    Row step{tr("step"), {}};
    for (const PredictedAgainstMeasured* c : checks)
      step.values.push_back({c->predicted.step_s, c->measured.step_s});
    rows_.push_back(step);
  }
  for (int p = 0; p < kStepPhaseCount && !checks.empty(); ++p) {
    Row row{QString::fromLatin1(kStepPhaseNames[size_t(p)]), {}};
    bool spent = false;
    for (const PredictedAgainstMeasured* c : checks) {
      const double predicted = c->predicted.phases ? (*c->predicted.phases)[size_t(p)] / 1e9 : 0;
      const double measured = c->measured.phases ? (*c->measured.phases)[size_t(p)] / 1e9 : 0;
      spent = spent || predicted > 0 || measured > 0;
      row.values.push_back({predicted, measured});
    }
    if (spent) rows_.push_back(std::move(row));
  }
  endResetModel();
}

int PredictionCompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(rows_.size());
}

int PredictionCompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 3 * int(runs_.size());
}

// A phase under 1 % of the measured step has no error worth reading: 0.05 ms against
// 0.001 ms is "+4900 %" of nothing.
bool PredictionCompareModel::errorShown(const QModelIndex& index) const {
  const size_t run = size_t(index.column() / 3);
  const double measured = rows_[size_t(index.row())].values[run].second;
  return measured > 0 && (index.row() == 0 || measured >= 0.01 * rows_[0].values[run].second);
}

QVariant PredictionCompareModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const auto [predicted, measured] = rows_[size_t(index.row())].values[size_t(index.column() / 3)];
  const int part = index.column() % 3;
  if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && part == 2)
    return tr("(predicted - measured) / measured: + where the prediction was too high");
  if (role == Qt::ForegroundRole && part == 2 && errorShown(index))
    return std::abs(relativeError(predicted, measured)) > 0.15 ? QColor(176, 0, 32)
                                                               : QColor(0, 110, 50);
  if (role != Qt::DisplayRole) return {};
  if (part < 2) return QString::number((part == 0 ? predicted : measured) * 1e3, 'f', 2);
  if (!errorShown(index)) return QStringLiteral("–");
  return QString::asprintf("%+.1f %%", 100 * relativeError(predicted, measured));
}

QVariant PredictionCompareModel::headerData(int section, Qt::Orientation orientation,
                                            int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical)
    return section < int(rows_.size()) ? QVariant(rows_[size_t(section)].name) : QVariant();
  if (section >= 3 * int(runs_.size())) return {};
  const auto [run, simulated] = runs_[size_t(section / 3)];
  switch (section % 3) {
    case 0:
      return tr("run %1: predicted ms\n(simulated run %2)").arg(run).arg(simulated);
    case 1:
      return tr("run %1: measured ms").arg(run);
    default:
      return tr("run %1: error").arg(run);
  }
}

}  // namespace ranklab
