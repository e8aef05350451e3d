#include "views/runs_page.h"

#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>

#include "views/models/runs_table_model.h"

namespace ranklab {

RunsPage::RunsPage(RunsTableModel* model, QWidget* parent)
    : QWidget(parent),
      model_(model),
      proxy_(new QSortFilterProxyModel(this)),
      view_(new QTableView(this)),
      filter_(new QLineEdit(this)),
      db_label_(new QLabel(this)) {
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(RunsTableModel::SortRole);
  proxy_->setFilterKeyColumn(-1);  // a filter word may match any column (name, tag, codec…)
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);

  filter_->setObjectName(QStringLiteral("runsFilter"));
  filter_->setPlaceholderText(tr("Filter runs: name, status, strategy, codec, tag…"));
  filter_->setClearButtonEnabled(true);
  connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);

  view_->setObjectName(QStringLiteral("runsView"));
  view_->setModel(proxy_);
  view_->setSortingEnabled(true);
  view_->sortByColumn(RunsTableModel::IdColumn, Qt::DescendingOrder);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view_->setAlternatingRowColors(true);
  view_->verticalHeader()->hide();
  view_->horizontalHeader()->setStretchLastSection(true);
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this] { emit currentRunChanged(currentRunId()); });
  connect(view_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    emit openRequested(index.data(RunsTableModel::RunIdRole).toLongLong());
  });

  db_label_->setObjectName(QStringLiteral("dbPath"));
  db_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* top = new QHBoxLayout;
  top->addWidget(filter_, 1);
  top->addWidget(db_label_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(view_, 1);
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
  add(QStringLiteral("exportCsv"), tr("Export CSV…"), &RunsPage::exportCurrent);
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

void RunsPage::openDbDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open a run store"), QDir::homePath(),
                                                    tr("Run stores (*.db);;All files (*)"));
  if (!path.isEmpty()) emit openDbRequested(path);
}

}  // namespace ranklab
