#include "views/compare_page.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "storage/run_origin.h"
#include "views/chart_export.h"
#include "views/curve_chart.h"
#include "views/models/rank_colour.h"
#include "views/models/runs_table_model.h"
#include "views/models/workbench_settings.h"

namespace ranklab {

namespace {

enum CompareMetric { LossMetric, AccuracyMetric, SentMetric, TradeoffMetric };

// Fills `box` with a note above its table, the table taking the height left.
void stackNoteOverTable(QWidget* box, QWidget* note, QWidget* table) {
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(note);
  layout->addWidget(table, 1);
}

}  // namespace

ComparePage::ComparePage(RunsTableModel* runs, QWidget* parent)
    : QWidget(parent),
      runs_(runs),
      settings_(new SettingsDiffModel(this)),
      summary_(new SummaryCompareModel(this)),
      run_list_(new QListWidget(this)),
      metric_(new QComboBox(this)),
      x_axis_(new QComboBox(this)),
      chart_(new CurveChart(tr("Runs compared"), tr("training loss"), this)),
      settings_view_(new QTableView(this)),
      summary_view_(new QTableView(this)),
      settings_note_(new QLabel(this)),
      diff_box_(new QWidget(this)),
      diff_note_(new QLabel(diff_box_)),
      diff_table_(new QTableWidget(0, 3, diff_box_)),
      prediction_(new PredictionCompareModel(this)),
      prediction_box_(new QWidget(this)),
      prediction_note_(new QLabel(prediction_box_)),
      prediction_view_(new QTableView(prediction_box_)) {
  run_list_->setObjectName(QStringLiteral("compareRunList"));
  connect(runs_, &QAbstractItemModel::modelReset, this, &ComparePage::refillRunList);
  QWidget* left = buildRunPicker();
  QHBoxLayout* controls = buildChartControls();
  QSplitter* tables = buildTables();

  auto* right = new QWidget(this);
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  right_layout->addLayout(controls);
  auto* vertical = new QSplitter(Qt::Vertical, right);
  vertical->addWidget(chart_);
  vertical->addWidget(tables);
  vertical->addWidget(buildPredictionBox());
  vertical->setStretchFactor(0, 3);
  vertical->setStretchFactor(1, 2);
  vertical->setStretchFactor(2, 1);
  right_layout->addWidget(vertical, 1);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 5);
  left->setMinimumWidth(280);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);
  setRuns({});
}

// The runs to tick, and the button that compares them.
QWidget* ComparePage::buildRunPicker() {
  auto* compare = new QPushButton(tr("Compare ticked runs"), this);
  compare->setObjectName(QStringLiteral("compareTicked"));
  connect(compare, &QPushButton::clicked, this, [this] {
    QList<qint64> ids;
    for (int i = 0; i < run_list_->count(); ++i)
      if (run_list_->item(i)->checkState() == Qt::Checked)
        ids << run_list_->item(i)->data(Qt::UserRole).toLongLong();
    if (ids.size() >= 2) emit compareRequested(ids);
  });
  auto* left = new QWidget(this);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(new QLabel(tr("Tick two or more runs:"), left));
  left_layout->addWidget(run_list_, 1);
  left_layout->addWidget(compare);
  return left;
}

// Which curve against which x axis, and the chart's export.
QHBoxLayout* ComparePage::buildChartControls() {
  metric_->setObjectName(QStringLiteral("compareMetric"));
  metric_->addItems({tr("training loss (mean of ranks)"), tr("test accuracy (%)"),
                     tr("MB/s sent (mean of ranks)"),
                     tr("MB sent vs accuracy (a point per run, Pareto front)")});
  x_axis_->setObjectName(QStringLiteral("compareXAxis"));
  x_axis_->addItems({tr("step"), tr("wall time (s)"), tr("MB sent")});
  x_axis_->setCurrentIndex(int(XAxis::WallTime));  // runs differ most in how long they take
  metric_->setCurrentIndex(std::clamp(WorkbenchSettings::compareCurve(), 0, metric_->count() - 1));
  connect(metric_, &QComboBox::currentIndexChanged, this, [this](int index) {
    WorkbenchSettings::setCompareCurve(index);  // remembered, as the live page's choices are
    redraw();
  });
  connect(x_axis_, &QComboBox::currentIndexChanged, this, &ComparePage::redraw);
  auto* export_chart = new QPushButton(tr("Export chart…"), this);
  connect(export_chart, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the comparison"), QDir::home().filePath(QStringLiteral("compare.png")),
        tr("PNG image (*.png);;SVG drawing (*.svg)"));
    if (path.isEmpty()) return;
    const QString error = exportChart(chart_, path);
    if (!error.isEmpty()) QMessageBox::warning(this, tr("Export chart"), error);
  });
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("curve:"), this));
  controls->addWidget(metric_);
  controls->addSpacing(16);
  controls->addWidget(new QLabel(tr("x axis:"), this));
  controls->addWidget(x_axis_);
  controls->addStretch(1);
  controls->addWidget(export_chart);
  return controls;
}

// The settings that differ beside the summaries.
QSplitter* ComparePage::buildTables() {
  for (QTableView* view : {settings_view_, summary_view_}) {
    view->setAlternatingRowColors(true);
    view->setSelectionMode(QAbstractItemView::NoSelection);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  }
  settings_view_->setObjectName(QStringLiteral("settingsDiff"));
  settings_view_->setModel(settings_);
  settings_view_->verticalHeader()->hide();
  summary_view_->setObjectName(QStringLiteral("summaryCompare"));
  summary_view_->setModel(summary_);
  settings_note_->setWordWrap(true);

  auto* settings_box = new QWidget(this);
  stackNoteOverTable(settings_box, settings_note_, settings_view_);
  auto* tables = new QSplitter(Qt::Horizontal, this);
  tables->addWidget(settings_box);
  tables->addWidget(summary_view_);
  tables->addWidget(buildDiffBox());
  tables->setStretchFactor(0, 2);  // the summaries' two columns and the diff need the room
  tables->setStretchFactor(1, 3);
  tables->setStretchFactor(2, 3);
  return tables;
}

// Two runs: where the second's step time differs from the first's (ranklab diff).
QWidget* ComparePage::buildDiffBox() {
  diff_table_->setObjectName(QStringLiteral("stepTimeDiff"));
  diff_table_->setHorizontalHeaderLabels({tr("Δ ms"), tr("who"), tr("phase")});
  diff_table_->verticalHeader()->hide();
  diff_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  diff_table_->setSelectionMode(QAbstractItemView::NoSelection);
  diff_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  diff_table_->horizontalHeader()->setStretchLastSection(true);
  diff_note_->setObjectName(QStringLiteral("stepTimeDiffNote"));
  diff_note_->setWordWrap(true);
  stackNoteOverTable(diff_box_, diff_note_, diff_table_);
  diff_box_->hide();
  return diff_box_;
}

// The runs something was predicted for: the prediction against the measure, per phase.
QWidget* ComparePage::buildPredictionBox() {
  prediction_box_->setObjectName(QStringLiteral("predictionBox"));
  prediction_note_->setObjectName(QStringLiteral("predictionNote"));
  prediction_note_->setWordWrap(true);
  prediction_note_->setText(
      tr("<b>Predicted against measured</b>: the simulated run of the same job before it, and the "
         "run itself, each by the slowest rank's median step (the first steps aside) and that "
         "rank's median per phase; error = (predicted − measured) / measured."));
  prediction_view_->setObjectName(QStringLiteral("predictionCompare"));
  prediction_view_->setModel(prediction_);
  prediction_view_->setAlternatingRowColors(true);
  prediction_view_->setSelectionMode(QAbstractItemView::NoSelection);
  prediction_view_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  stackNoteOverTable(prediction_box_, prediction_note_, prediction_view_);
  prediction_box_->hide();
  return prediction_box_;
}

void ComparePage::showPredictions() {
  prediction_->setRuns(compared_);
  prediction_box_->setVisible(!prediction_->empty());
}

void ComparePage::setDiff(const RunDiff& diff, const QString& error) {
  if (compared_.size() != 2 || diff.run_a != compared_[0].run.id ||
      diff.run_b != compared_[1].run.id)
    return;  // an answer for runs no longer compared
  diff_table_->setRowCount(0);
  diff_box_->show();
  if (!error.isEmpty()) {
    diff_note_->setText(tr("<b>Step time:</b> %1").arg(error.toHtmlEscaped()));
    return;
  }
  diff_note_->setText(
      tr("<b>Step time, run %1 against run %2</b> over the %3 steps both recorded: %4 s against "
         "%5 s (%6 s), along each run's critical path:")
          .arg(diff.run_b)
          .arg(diff.run_a)
          .arg(diff.steps)
          .arg(diff.b_s, 0, 'f', 3)
          .arg(diff.a_s, 0, 'f', 3)
          .arg(QString::asprintf("%+.3f", diff.total_delta_s)));
  for (const DiffPart& p : diff.parts) {
    if (std::abs(p.delta_s) < 1e-6) continue;
    const int row = diff_table_->rowCount();
    diff_table_->insertRow(row);
    auto* delta = new QTableWidgetItem(QString::asprintf("%+.2f", p.delta_s * 1e3));
    delta->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    diff_table_->setItem(row, 0, delta);
    diff_table_->setItem(
        row, 1, new QTableWidgetItem(p.rank < 0 ? tr("all ranks") : tr("rank %1").arg(p.rank)));
    diff_table_->setItem(row, 2, new QTableWidgetItem(QString::fromStdString(p.phase)));
  }
  if (diff_table_->rowCount() == 0)
    diff_note_->setText(diff_note_->text() + tr(" no piece of the path changed (the difference is "
                                                "where the ranks' steps start)."));
}

void ComparePage::refillRunList() {
  QList<qint64> checked;
  for (int i = 0; i < run_list_->count(); ++i)
    if (run_list_->item(i)->checkState() == Qt::Checked)
      checked << run_list_->item(i)->data(Qt::UserRole).toLongLong();
  run_list_->clear();
  for (int row = 0; row < runs_->rowCount(); ++row) {
    const RunRow& run = runs_->runAt(row);
    auto* item = new QListWidgetItem(tr("%1 · %2 · %3 ranks")
                                         .arg(runLabel(run), QString::fromStdString(run.status))
                                         .arg(run.world),
                                     run_list_);
    item->setData(Qt::UserRole, QVariant::fromValue<qlonglong>(run.id));
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(checked.contains(run.id) ? Qt::Checked : Qt::Unchecked);
  }
}

void ComparePage::checkRuns(const QList<qint64>& run_ids) {
  for (int i = 0; i < run_list_->count(); ++i) {
    QListWidgetItem* item = run_list_->item(i);
    item->setCheckState(run_ids.contains(item->data(Qt::UserRole).toLongLong()) ? Qt::Checked
                                                                                : Qt::Unchecked);
  }
}

void ComparePage::setRuns(std::vector<ComparedRun> runs) {
  compared_ = std::move(runs);
  settings_->setRuns(compared_);
  summary_->setRuns(compared_);
  const auto imported = std::count_if(compared_.begin(), compared_.end(), [](const ComparedRun& c) {
    return originOf(c.run) == RunOrigin::kPytorchImport;
  });
  if (compared_.size() < 2)
    settings_note_->setText(tr("Pick two or more runs to compare."));
  else if (imported > 0 && settings_->rowCount() == 0)
    settings_note_->setText(
        tr("<b>No job settings to compare:</b> an imported run (PyTorch traces) has none."));
  else if (settings_->rowCount() == 0)
    settings_note_->setText(tr("<b>The runs used the same job settings.</b>"));
  else
    settings_note_->setText(
        tr("<b>%n job setting(s) differ</b> (the rest are the same):", "", settings_->rowCount()));
  QList<qint64> ids;
  for (const ComparedRun& c : compared_) ids << c.run.id;
  checkRuns(ids);
  diff_box_->hide();
  showPredictions();
  if (compared_.size() == 2) emit diffRequested(compared_[0].run.id, compared_[1].run.id);
  redraw();
}

// One point per run, MB each rank sent against final accuracy, and the front of the runs
// no other run beats on both: the compression trade-off at a glance.
void ComparePage::drawTradeoff() {
  chart_->setXTitle(tr("MB sent per rank over the whole run"));
  chart_->setYTitle(tr("final test accuracy (%)"));
  std::vector<Curve> curves;
  QList<QPointF> points;
  for (size_t i = 0; i < compared_.size(); ++i) {
    const ComparedRun& c = compared_[i];
    const auto point = tradeoffPoint(c.series);
    if (!point) continue;  // no evaluation: no accuracy to place it at
    const QString codec = QString::fromStdString(c.run.codec.empty() ? "none" : c.run.codec);
    // Short, so six runs' legend entries fit: the run and what it sent with.
    curves.push_back({int(c.run.id),
                      tr("run %1 · %2").arg(c.run.id).arg(codec),
                      rankColour(int(i)),
                      2.0,
                      false,
                      true,
                      true,
                      {*point}});
    points.append(*point);
  }
  const QList<QPointF> front = paretoFront(points);
  if (front.size() > 1)
    curves.push_back(
        {kParetoKey, tr("Pareto front"), QColor(90, 90, 90), 1.2, true, false, true, front});
  chart_->setCurves(curves, false);
}

void ComparePage::redraw() {
  const auto metric = CompareMetric(metric_->currentIndex());
  x_axis_->setEnabled(metric != TradeoffMetric);
  if (metric == TradeoffMetric) return drawTradeoff();
  const auto x = XAxis(x_axis_->currentIndex());
  chart_->setXTitle(x == XAxis::Step       ? tr("step")
                    : x == XAxis::WallTime ? tr("wall time (s)")
                                           : tr("MB sent (per rank)"));
  chart_->setYTitle(metric == LossMetric       ? tr("training loss")
                    : metric == AccuracyMetric ? tr("test accuracy (%)")
                                               : tr("MB/s sent"));
  std::vector<Curve> curves;
  for (size_t i = 0; i < compared_.size(); ++i) {
    const ComparedRun& c = compared_[i];
    Curve curve{int(c.run.id),
                runLabel(c.run),
                rankColour(int(i)),
                2.0,
                false,
                metric == AccuracyMetric,
                true,
                {}};
    if (metric == AccuracyMetric) {
      for (const EvalPoint& e : c.series.evals())
        curve.points.append(QPointF(x == XAxis::Step       ? e.step
                                    : x == XAxis::WallTime ? e.time_s
                                                           : e.sent_mb,
                                    e.accuracy * 100.0));
    } else if (metric != LossMetric || originOf(c.run) != RunOrigin::kPytorchImport) {
      // An imported run's traces hold no loss: no curve rather than a line at 0.
      curve.points =
          curvePoints(c.series.global(), metric == LossMetric ? Metric::Loss : Metric::SentMBps, x,
                      0.6, chart_->pointBudget());
    }
    curves.push_back(std::move(curve));
  }
  chart_->setCurves(curves, metric != AccuracyMetric);
}

}  // namespace ranklab
