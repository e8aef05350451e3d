#include "views/models/runs_table_model.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>
#include <unordered_map>

#include "engine/job/job_choices.h"
#include "storage/scheduler_text.h"
#include "views/models/compression_text.h"

namespace ranklab {

namespace {

// Stored times are ISO-8601 UTC; a person reads local time to the minute.
QString localTime(const std::string& iso) {
  const QString text = QString::fromStdString(iso);
  QDateTime t = QDateTime::fromString(text, Qt::ISODateWithMs);
  if (!t.isValid()) t = QDateTime::fromString(text, Qt::ISODate);
  if (!t.isValid()) return text;
  if (t.timeSpec() == Qt::LocalTime) t.setTimeSpec(Qt::UTC);  // no zone written: it is UTC
  return t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd hh:mm"));
}

QColor statusColour(const std::string& status) {
  if (status == "done") return QColor(0x1b, 0x7a, 0x3a);
  if (status == "failed") return QColor(0xb3, 0x1b, 0x1b);
  if (status == "running") return QColor(0x1f, 0x5f, 0xbf);
  if (status == "pending") return QColor(0x8a, 0x6d, 0x00);
  return QColor(0x80, 0x5b, 0x00);  // stopped and anything else
}

}  // namespace

RunsTableModel::RunsTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunsTableModel::setRuns(std::vector<RunRow> runs, const std::vector<RunSummary>& summaries,
                             const std::map<int64_t, std::vector<std::string>>& tags) {
  std::unordered_map<int64_t, const RunSummary*> by_id;
  for (const RunSummary& s : summaries) by_id[s.run.id] = &s;

  beginResetModel();
  rows_.clear();
  rows_.reserve(runs.size());
  for (RunRow& run : runs) {
    Row row;
    if (auto it = by_id.find(run.id); it != by_id.end()) {
      row.test_accuracy = it->second->test_accuracy;
      row.diverged = it->second->diverged;
      if (it->second->samples_per_s > 0) row.samples_per_s = it->second->samples_per_s;
      row.bytes_tx = it->second->bytes_tx;
      row.bytes_raw = it->second->bytes_raw;
    }
    if (auto it = tags.find(run.id); it != tags.end())
      for (const std::string& tag : it->second) row.tags << QString::fromStdString(tag);
    row.run = std::move(run);
    rows_.push_back(std::move(row));
  }
  endResetModel();
}

int64_t RunsTableModel::runId(int row) const {
  return row >= 0 && row < int(rows_.size()) ? rows_[row].run.id : 0;
}

int RunsTableModel::rowOfRun(int64_t run_id) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].run.id == run_id) return int(i);
  return -1;
}

int RunsTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(rows_.size());
}

int RunsTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunsTableModel::display(const Row& row, int column) const {
  const RunRow& run = row.run;
  switch (column) {
    case IdColumn:
      return QVariant::fromValue<qlonglong>(run.id);
    case NameColumn:
      return QString::fromStdString(run.name);
    case CreatedColumn:
      return localTime(run.created);
    case StatusColumn:  // "pending" while its Slurm job waits; the job's id beside a state
      if (run.scheduler_job.empty()) return QString::fromStdString(run.status);
      return QString::fromStdString(shownStatus(run) + " · slurm " + run.scheduler_job);
    case WorldColumn:
      return run.world;
    case StrategyColumn:
      if (run.algorithm.empty()) return QString::fromStdString(run.strategy);
      return QString::fromStdString(run.strategy + "/" + run.algorithm);
    case CodecColumn:
      if (run.amp.empty() || choiceNamed<AmpDtype>(run.amp) == AmpDtype::kFp32)
        return QString::fromStdString(run.codec);
      return QString::fromStdString(run.codec + " · " + run.amp);
    case BytesColumn:
      if (row.bytes_tx <= 0) return {};
      return QStringLiteral("%1 MB").arg(double(row.bytes_tx) / 1e6, 0, 'f', 1);
    case CompressionColumn:
      return compressionText(row.bytes_raw, row.bytes_tx);
    case TagsColumn:
      return row.tags.join(QStringLiteral(", "));
    case TestAccuracyColumn:
      if (row.diverged) return tr("diverged");
      if (!row.test_accuracy) return {};
      return QStringLiteral("%1 %").arg(*row.test_accuracy * 100.0, 0, 'f', 1);
    case SamplesPerSecondColumn:
      if (!row.samples_per_s) return {};
      return QString::number(*row.samples_per_s, 'f', 0);
  }
  return {};
}

QVariant RunsTableModel::sortValue(const Row& row, int column) const {
  switch (column) {
    case CreatedColumn:
      return QString::fromStdString(row.run.created);
    case TestAccuracyColumn:
      // A diverged run sorts below every evaluated one: never "best".
      if (row.diverged) return QVariant(-0.5);
      return row.test_accuracy ? QVariant(*row.test_accuracy) : QVariant(-1.0);
    case SamplesPerSecondColumn:
      return row.samples_per_s ? QVariant(*row.samples_per_s) : QVariant(-1.0);
    case BytesColumn:
      return QVariant::fromValue<qlonglong>(row.bytes_tx);
    case CompressionColumn:  // "–" sends as many bytes as raw: 1x
      return compressionRatio(row.bytes_raw, row.bytes_tx).value_or(1.0);
    default:
      return display(row, column);
  }
}

QVariant RunsTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Row& row = rows_[index.row()];
  switch (role) {
    case Qt::DisplayRole:
      return display(row, index.column());
    case SortRole:
      return sortValue(row, index.column());
    case RunIdRole:
      return QVariant::fromValue<qlonglong>(row.run.id);
    case Qt::TextAlignmentRole:
      switch (index.column()) {
        case IdColumn:
        case WorldColumn:
        case TestAccuracyColumn:
        case SamplesPerSecondColumn:
        case BytesColumn:
        case CompressionColumn:
          return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        default:
          return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
      }
    case Qt::ForegroundRole:
      if (index.column() == StatusColumn) return QBrush(statusColour(shownStatus(row.run)));
      return {};
    case Qt::ToolTipRole:
      if (index.column() == StatusColumn && !row.run.scheduler_job.empty())
        return QString::fromStdString(schedulerText(row.run));
      if (row.run.job_path.empty()) return QString::fromStdString(row.run.name);
      return QString::fromStdString(row.run.name + "\n" + row.run.job_path);
  }
  return {};
}

QVariant RunsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case IdColumn:
      return tr("id");
    case NameColumn:
      return tr("name");
    case CreatedColumn:
      return tr("created");
    case StatusColumn:
      return tr("status");
    case WorldColumn:
      return tr("world");
    case StrategyColumn:
      return tr("strategy");
    case TestAccuracyColumn:
      return tr("test acc.");
    case SamplesPerSecondColumn:
      return tr("samples/s");
    case CodecColumn:
      return tr("codec");
    case BytesColumn:
      return tr("sent");
    case CompressionColumn:
      return tr("compression");
    case TagsColumn:
      return tr("tags");
  }
  return {};
}

}  // namespace ranklab
