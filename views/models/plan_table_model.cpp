#include "views/models/plan_table_model.h"

#include <QBrush>
#include <QColor>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

namespace ranklab {

namespace {

// Decimal units, as the CLI prints memory: 1.25 GB = 1.25e9 bytes.
QString bytesText(double bytes) {
  return QLocale().formattedDataSize(qint64(bytes), 2, QLocale::DataSizeSIFormat);
}

// Three significant digits down to a microsecond: a small model's step is a fraction of a ms.
QString msText(double seconds) {
  const double ms = seconds * 1e3;
  return QString::number(ms, 'f', ms < 1 ? 3 : ms < 10 ? 2 : 1);
}

PlannedLayout candidateOf(const QJsonObject& o, int rank) {
  PlannedLayout c;
  c.rank = rank;
  const QJsonObject layout = o.value(QLatin1String("layout")).toObject();
  c.ranks = layout.value(QLatin1String("ranks")).toInt();
  c.data = layout.value(QLatin1String("data")).toInt();
  c.pipeline = layout.value(QLatin1String("pipeline")).toInt();
  c.tensor = layout.value(QLatin1String("tensor")).toInt();
  c.zero = layout.value(QLatin1String("zero")).toInt();
  c.microbatches = layout.value(QLatin1String("microbatches")).toInt();
  c.schedule = layout.value(QLatin1String("schedule")).toString();
  c.sequence_parallel = layout.value(QLatin1String("sequence_parallel")).toBool();
  c.overrides =
      o.value(QLatin1String("set")).toString().split(QLatin1Char(' '), Qt::SkipEmptyParts);
  c.step_s = o.value(QLatin1String("step_s")).toDouble();
  c.sample_s = o.value(QLatin1String("sample_s")).toDouble();
  c.memory_bytes = o.value(QLatin1String("memory_bytes")).toDouble();
  c.peak_bytes = o.value(QLatin1String("peak_bytes")).toDouble();
  c.fits = o.value(QLatin1String("fits")).toBool(true);
  c.dominant = o.value(QLatin1String("dominant")).toString();
  const QJsonObject phases = o.value(QLatin1String("phases")).toObject();
  c.compute_s = phases.value(QLatin1String("compute")).toDouble();
  c.exposed_comm_s = phases.value(QLatin1String("exposed_comm")).toDouble();
  c.bubble_s = phases.value(QLatin1String("bubble")).toDouble();
  c.wait_s = phases.value(QLatin1String("wait_other")).toDouble();
  return c;
}

}  // namespace

bool parsePlanJson(const QByteArray& json, Plan* plan, QString* error) {
  QJsonParseError parse_error;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &parse_error);
  if (doc.isNull()) {
    *error = QStringLiteral("the plan's output is not JSON: %1 at byte %2")
                 .arg(parse_error.errorString())
                 .arg(parse_error.offset);
    return false;
  }
  const QJsonObject root = doc.object();
  if (!root.value(QLatin1String("candidates")).isArray()) {
    *error = QStringLiteral("the plan's output has no \"candidates\" list");
    return false;
  }
  Plan out;
  const QJsonArray candidates = root.value(QLatin1String("candidates")).toArray();
  for (qsizetype i = 0; i < candidates.size(); ++i)
    out.candidates.push_back(candidateOf(candidates[i].toObject(), int(i) + 1));
  out.memory_limit_bytes = root.value(QLatin1String("memory_limit_bytes")).toDouble();
  out.layouts = root.value(QLatin1String("layouts")).toInt(int(out.candidates.size()));
  out.calibration = root.value(QLatin1String("calibration")).toString();
  *plan = std::move(out);
  return true;
}

PlanTableModel::PlanTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void PlanTableModel::setPlan(Plan plan) {
  beginResetModel();
  plan_ = std::move(plan);
  endResetModel();
}

int PlanTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(plan_.candidates.size());
}

int PlanTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QString PlanTableModel::layoutText(const PlannedLayout& c) {
  QStringList parts;
  if (c.data > 1 || (c.pipeline == 1 && c.tensor == 1)) parts << tr("data %1").arg(c.data);
  if (c.pipeline > 1)
    parts << tr("pipeline %1 (%2, %3 micro)").arg(c.pipeline).arg(c.schedule).arg(c.microbatches);
  if (c.tensor > 1)
    parts << (c.sequence_parallel ? tr("tensor %1 + seq").arg(c.tensor)
                                  : tr("tensor %1").arg(c.tensor));
  if (c.zero > 0) parts << tr("ZeRO %1").arg(c.zero);
  return parts.join(QStringLiteral(" · "));
}

QVariant PlanTableModel::display(const PlannedLayout& c, int column) const {
  switch (column) {
    case RankColumn:
      return c.rank;
    case LayoutColumn:
      return layoutText(c);
    case StepColumn:
      return msText(c.step_s);
    case SamplesPerSecondColumn:
      return c.sample_s > 0 ? QString::number(1 / c.sample_s, 'f', 0) : QString();
    case MemoryColumn:
      return bytesText(c.peak_bytes);
    case FitsColumn:
      return c.fits ? tr("yes") : tr("no");
    case DominantColumn:
      return c.dominant;
    case ComputeColumn:
      return msText(c.compute_s);
    case CommColumn:
      return msText(c.exposed_comm_s);
    case BubbleColumn:
      return msText(c.bubble_s);
    case WaitColumn:
      return msText(c.wait_s);
  }
  return {};
}

QVariant PlanTableModel::sortValue(const PlannedLayout& c, int column) const {
  switch (column) {
    case StepColumn:
      return c.step_s;
    case SamplesPerSecondColumn:
      return c.sample_s > 0 ? 1 / c.sample_s : 0.0;
    case MemoryColumn:
      return c.peak_bytes;
    case FitsColumn:
      return c.fits ? 1 : 0;
    case DominantColumn:
      return c.dominant;
    case ComputeColumn:
      return c.compute_s;
    case CommColumn:
      return c.exposed_comm_s;
    case BubbleColumn:
      return c.bubble_s;
    case WaitColumn:
      return c.wait_s;
    default:  // the layout's columns sort in the plan's order
      return c.rank;
  }
}

QString PlanTableModel::toolTip(const PlannedLayout& c, int column) const {
  if (column == MemoryColumn)
    return tr("Estimated peak of the largest rank %1 (its ledger %2, the rest: the process and "
              "its data) against %3 per rank")
        .arg(bytesText(c.peak_bytes), bytesText(c.memory_bytes),
             bytesText(plan_.memory_limit_bytes));
  if (column == LayoutColumn || column == RankColumn)
    return tr("ranklab simulate JOB --set %1").arg(c.overrides.join(QStringLiteral(" --set ")));
  return {};
}

QVariant PlanTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const PlannedLayout& c = plan_.candidates[size_t(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      return display(c, index.column());
    case SortRole:
      return sortValue(c, index.column());
    case MemoryFractionRole:
      return plan_.memory_limit_bytes > 0 ? c.peak_bytes / plan_.memory_limit_bytes : 0.0;
    case OverridesRole:
      return c.overrides;
    case Qt::ToolTipRole:
      return toolTip(c, index.column());
    case Qt::TextAlignmentRole:
      return index.column() == LayoutColumn || index.column() == DominantColumn
                 ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                 : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole:
      if (index.column() == FitsColumn && !c.fits) return QBrush(QColor(0xb3, 0x1b, 0x1b));
      return {};
  }
  return {};
}

QVariant PlanTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case RankColumn:
      return tr("#");
    case LayoutColumn:
      return tr("Layout");
    case StepColumn:
      return tr("Step (ms)");
    case SamplesPerSecondColumn:
      return tr("Samples/s");
    case MemoryColumn:
      return tr("Peak memory per rank");
    case FitsColumn:
      return tr("Fits");
    case DominantColumn:
      return tr("Dominated by");
    case ComputeColumn:
      return tr("Compute (ms)");
    case CommColumn:
      return tr("Exposed comm (ms)");
    case BubbleColumn:
      return tr("Bubble (ms)");
    case WaitColumn:
      return tr("Wait (ms)");
  }
  return {};
}

}  // namespace ranklab
