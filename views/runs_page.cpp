#include "views/runs_page.h"

#include <QChart>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>

#include "engine/job/job_spec.h"
#include "views/chart_export.h"
#include "views/curve_chart.h"
#include "views/models/runs_table_model.h"
#include "views/models/workbench_settings.h"
#include "views/run_store_reader.h"
#include "views/table_style.h"

namespace ranklab {

RunsPage::RunsPage(RunsTableModel* model, QWidget* parent)
    : QWidget(parent),
      model_(model),
      proxy_(new QSortFilterProxyModel(this)),
      view_(new QTableView(this)),
      filter_(new QLineEdit(this)),
      db_label_(new QLabel(this)),
      preview_(new CurveChart(tr("Loss of the selected run"), tr("training loss"), this)) {
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(RunsTableModel::SortRole);
  proxy_->setFilterKeyColumn(-1);  // a filter word may match any column (name, tag, codec…)
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);

  filter_->setObjectName(QStringLiteral("runsFilter"));
  filter_->setPlaceholderText(tr("Filter runs: name, status, strategy, codec, tag…"));
  filter_->setClearButtonEnabled(true);
  connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);

  view_->setObjectName(QStringLiteral("runsView"));
  setUpSortedRows(view_, proxy_, RunsTableModel::IdColumn, Qt::DescendingOrder,
                  QAbstractItemView::ExtendedSelection);
  view_->horizontalHeader()->setStretchLastSection(true);
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this] { emit currentRunChanged(currentRunId()); });
  connect(view_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    emit openRequested(index.data(RunsTableModel::RunIdRole).toLongLong());
  });

  preview_->setObjectName(QStringLiteral("runPreview"));
  connect(model_, &QAbstractItemModel::modelReset, this, &RunsPage::clearPreviewIfGone);

  db_label_->setObjectName(QStringLiteral("dbPath"));
  db_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* top = new QHBoxLayout;
  top->addWidget(filter_, 1);
  top->addWidget(db_label_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(view_);
  split->addWidget(preview_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);
  layout->addWidget(buildActions());
}

QWidget* RunsPage::buildActions() {
  auto* bar = new QWidget(this);
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  auto add = [&](const QString& name, const QString& text, auto slot) {
    auto* button = new QPushButton(text, bar);
    button->setObjectName(name);
    connect(button, &QPushButton::clicked, this, slot);
    row->addWidget(button);
    return button;
  };
  add(QStringLiteral("openRun"), tr("Open"), [this] {
    if (const int64_t id = currentRunId()) emit openRequested(id);
  });
  add(QStringLiteral("compareRuns"), tr("Compare selected"), [this] {
    QList<qint64> ids;
    for (int64_t id : selectedRunIds()) ids << id;
    emit compareRequested(ids);
  });
  add(QStringLiteral("renameRun"), tr("Rename…"), &RunsPage::renameCurrent);
  add(QStringLiteral("tagRun"), tr("Tags…"), &RunsPage::tagCurrent);
  add(QStringLiteral("resumeRun"), tr("Resume…"), &RunsPage::resumeCurrent);
  // Steps as CSV or the run as a trace: one button, so the row stays short.
  QPushButton* export_run = add(QStringLiteral("exportRun"), tr("Export run"), [] {});
  auto* export_menu = new QMenu(export_run);
  export_menu->addAction(tr("Steps as CSV…"), this, &RunsPage::exportCurrent)
      ->setObjectName(QStringLiteral("exportCsv"));
  export_menu
      ->addAction(tr("Trace for Perfetto / chrome://tracing…"), this, &RunsPage::exportTraceCurrent)
      ->setObjectName(QStringLiteral("exportTrace"));
  export_run->setMenu(export_menu);
  export_chart_ =
      add(QStringLiteral("exportChart"), tr("Export chart…"), &RunsPage::exportChartDialog);
  export_chart_->setEnabled(false);
  add(QStringLiteral("deleteRuns"), tr("Delete…"), &RunsPage::deleteSelected);
  row->addStretch(1);
  add(QStringLiteral("openDb"), tr("Open another run store…"), &RunsPage::openDbDialog);
  return bar;
}

void RunsPage::setDbPath(const QString& path) {
  db_label_->setText(tr("store: %1").arg(QDir::toNativeSeparators(path)));
}

void RunsPage::selectRun(int64_t run_id) {
  const int row = model_->rowOfRun(run_id);
  if (row < 0) return;
  const QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
  if (!index.isValid()) return;  // filtered out
  view_->selectionModel()->setCurrentIndex(
      index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  view_->scrollTo(index);
}

QList<int64_t> RunsPage::selectedRunIds() const {
  QList<int64_t> ids;
  QModelIndexList rows = view_->selectionModel()->selectedRows();
  std::sort(rows.begin(), rows.end(),
            [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
  for (const QModelIndex& index : rows) ids << index.data(RunsTableModel::RunIdRole).toLongLong();
  return ids;
}

int64_t RunsPage::currentRunId() const {
  const QModelIndex current = view_->selectionModel()->currentIndex();
  return current.isValid() ? current.data(RunsTableModel::RunIdRole).toLongLong() : 0;
}

void RunsPage::renameCurrent() {
  const int64_t id = currentRunId();
  const int row = model_->rowOfRun(id);
  if (row < 0) return;
  bool ok = false;
  const QString name =
      QInputDialog::getText(this, tr("Rename run %1").arg(id), tr("Name:"), QLineEdit::Normal,
                            QString::fromStdString(model_->runAt(row).name), &ok);
  if (ok && !name.trimmed().isEmpty()) emit renameRequested(id, name.trimmed());
}

// Asks on how many ranks (the run's own by default; another is an elastic resume).
void RunsPage::resumeCurrent() {
  const int64_t id = currentRunId();
  const int row = model_->rowOfRun(id);
  if (row < 0) return;
  bool ok = false;
  const int ranks = QInputDialog::getInt(
      this, tr("Resume run %1").arg(id),
      tr("Continue run %1 from its checkpoint as a new run, on how many ranks?\n"
         "Another number than %2 resumes it elastically (train.elastic).")
          .arg(id)
          .arg(model_->runAt(row).world),
      model_->runAt(row).world, 1, kMaxRanks, 1, &ok);
  if (ok) emit resumeRequested(id, ranks);
}

void RunsPage::tagCurrent() {
  const int64_t id = currentRunId();
  const int row = model_->rowOfRun(id);
  if (row < 0) return;
  bool ok = false;
  const QString text =
      QInputDialog::getText(this, tr("Tags of run %1").arg(id), tr("Tags, separated by commas:"),
                            QLineEdit::Normal, model_->tagsAt(row).join(QStringLiteral(", ")), &ok);
  if (!ok) return;
  QStringList tags;
  for (const QString& t : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
    if (!t.trimmed().isEmpty()) tags << t.trimmed();
  emit tagsRequested(id, tags);
}

void RunsPage::deleteSelected() {
  const QList<int64_t> ids = selectedRunIds();
  if (ids.isEmpty()) return;
  QStringList names;
  QList<qint64> qids;
  for (int64_t id : ids) {
    names << tr("run %1").arg(id);
    qids << id;
  }
  const auto answer = QMessageBox::question(
      this, tr("Delete runs"),
      tr("Delete %1 and every step, evaluation and event recorded for it? This cannot be undone.")
          .arg(names.join(QStringLiteral(", "))),
      QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
  if (answer == QMessageBox::Yes) emit deleteRequested(qids);
}

void RunsPage::exportCurrent() {
  const int64_t id = currentRunId();
  if (!id) return;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export run %1 as CSV").arg(id),
      QDir::home().filePath(QStringLiteral("run-%1-steps.csv").arg(id)), tr("CSV files (*.csv)"));
  if (!path.isEmpty()) emit exportCsvRequested(id, path);
}

void RunsPage::exportTraceCurrent() {
  const int64_t id = currentRunId();
  if (!id) return;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export run %1 as a trace").arg(id),
      QDir::home().filePath(QStringLiteral("run-%1-trace.json").arg(id)),
      tr("Trace Event JSON (*.json)"));
  if (!path.isEmpty()) emit exportTraceRequested(id, path);
}

void RunsPage::showPreview(const StoredRun& run) {
  showPreview(run.run.id, QString::fromStdString(run.run.name), run.series);
}

void RunsPage::showPreview(int64_t run_id, const QString& name, const RunSeries& series) {
  preview_run_id_ = run_id;
  const double smoothing = WorkbenchSettings::smoothing();
  preview_->chart()->setTitle(tr("Loss of run %1 “%2” (smoothing %3)%4")
                                  .arg(run_id)
                                  .arg(name)
                                  .arg(smoothing, 0, 'f', 2)
                                  .arg(rankCurvesNote(series)));
  preview_->setCurves(lossCurves(series, XAxis::Step, smoothing, preview_->pointBudget()));
  export_chart_->setEnabled(true);
}

void RunsPage::clearPreviewIfGone() {
  if (preview_run_id_ == 0 || model_->rowOfRun(preview_run_id_) >= 0) return;
  preview_run_id_ = 0;
  preview_->chart()->setTitle(tr("Loss of the selected run"));
  preview_->clear();
  export_chart_->setEnabled(false);
}

QString RunsPage::exportPreview(const QString& path) {
  if (preview_run_id_ == 0) return tr("%1: no run's chart is shown to export").arg(path);
  return exportChart(preview_, path);
}

void RunsPage::exportChartDialog() {
  if (preview_run_id_ == 0) return;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export the chart of run %1").arg(preview_run_id_),
      QDir::home().filePath(QStringLiteral("run-%1-loss.png").arg(preview_run_id_)),
      tr("PNG image (*.png);;SVG drawing (*.svg)"));
  if (path.isEmpty()) return;
  const QString error = exportPreview(path);
  if (!error.isEmpty()) QMessageBox::warning(this, tr("Export chart"), error);
}

void RunsPage::openDbDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open a run store"), QDir::homePath(),
                                                    tr("Run stores (*.db);;All files (*)"));
  if (!path.isEmpty()) emit openDbRequested(path);
}

}  // namespace ranklab
