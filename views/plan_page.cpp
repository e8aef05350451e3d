#include "views/plan_page.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "views/memory_bar_delegate.h"
#include "views/models/job_draft.h"
#include "views/models/plan_table_model.h"
#include "views/table_style.h"

namespace ranklab {

namespace {

constexpr int kMostCandidates = 500;  // the table sorts what it holds: hold every layout
constexpr int kMostRanks = 65536;

QString bytesText(double bytes) {
  return QLocale().formattedDataSize(qint64(bytes), 2, QLocale::DataSizeSIFormat);
}

}  // namespace

PlanPage::PlanPage(const JobDraft& draft, JobCommandOptions options, QWidget* parent)
    : QWidget(parent),
      draft_(draft),
      command_(new JobCommand(std::move(options), this)),
      model_(new PlanTableModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      view_(new QTableView(this)),
      status_(new QLabel(this)),
      log_(new QPlainTextEdit(this)) {
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(PlanTableModel::SortRole);
  view_->setObjectName(QStringLiteral("planView"));
  setUpSortedRows(view_, proxy_, PlanTableModel::RankColumn, Qt::AscendingOrder,
                  QAbstractItemView::SingleSelection);
  // The layout takes the room left: the numbers keep their own width, side by side.
  view_->horizontalHeader()->setStretchLastSection(false);
  view_->horizontalHeader()->setSectionResizeMode(PlanTableModel::LayoutColumn,
                                                  QHeaderView::Stretch);
  view_->setItemDelegateForColumn(PlanTableModel::MemoryColumn,
                                  new MemoryBarDelegate(PlanTableModel::MemoryFractionRole, view_));
  connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &PlanPage::updateActions);

  status_->setObjectName(QStringLiteral("planStatus"));
  status_->setWordWrap(true);
  status_->setText(
      tr("Plan the setup form's job: every layout of its ranks, predicted from "
         "this machine's calibration (measured the first time it is missing)."));
  log_->setObjectName(QStringLiteral("planLog"));
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(500);
  log_->setFixedHeight(log_->fontMetrics().lineSpacing() * 6 + 12);

  connect(command_, &JobCommand::progress, this, &PlanPage::appendLog);
  connect(command_, &JobCommand::finished, this, &PlanPage::onCommandFinished);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(buildControls());
  layout->addWidget(status_);
  layout->addWidget(view_, 1);
  layout->addWidget(buildActions());
  layout->addWidget(log_);
  updateActions();
}

QWidget* PlanPage::buildControls() {
  auto* bar = new QWidget(this);
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  ranks_ = new QSpinBox(bar);
  ranks_->setObjectName(QStringLiteral("planRanks"));
  ranks_->setRange(1, kMostRanks);
  connect(ranks_, &QSpinBox::valueChanged, this, [this] { ranks_chosen_ = true; });
  memory_ = new QLineEdit(bar);
  memory_->setObjectName(QStringLiteral("planMemory"));
  memory_->setPlaceholderText(tr("this machine's share"));
  memory_->setMinimumWidth(memory_->fontMetrics().horizontalAdvance(memory_->placeholderText()) +
                           24);
  memory_->setToolTip(
      tr("Memory a rank may hold, e.g. 16G or 512M (decimal units); empty: "
         "this machine's memory divided by the ranks"));
  calibration_ = new QLineEdit(bar);
  calibration_->setObjectName(QStringLiteral("planCalibration"));
  calibration_->setPlaceholderText(tr("this machine's"));
  calibration_->setToolTip(
      tr("A calibration file exported on the machines the job will run on "
         "(ranklab calibrate --export FILE); empty: this machine's, "
         "measured where it is missing"));
  auto* browse = new QPushButton(tr("…"), bar);
  browse->setFixedWidth(browse->fontMetrics().horizontalAdvance(QStringLiteral("…")) + 24);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString file =
        QFileDialog::getOpenFileName(this, tr("Calibration file"), {}, tr("Calibration (*.json)"));
    if (!file.isEmpty()) calibration_->setText(file);
  });
  plan_button_ = new QPushButton(tr("Plan"), bar);
  plan_button_->setObjectName(QStringLiteral("planButton"));
  plan_button_->setDefault(true);
  connect(plan_button_, &QPushButton::clicked, this, &PlanPage::plan);
  cancel_ = new QPushButton(tr("Cancel"), bar);
  connect(cancel_, &QPushButton::clicked, command_, &JobCommand::cancel);

  row->addWidget(new QLabel(tr("Ranks:"), bar));
  row->addWidget(ranks_);
  row->addSpacing(12);
  row->addWidget(new QLabel(tr("Memory per rank:"), bar));
  row->addWidget(memory_);
  row->addSpacing(12);
  row->addWidget(new QLabel(tr("Calibration:"), bar));
  row->addWidget(calibration_, 1);
  row->addWidget(browse);
  row->addSpacing(12);
  row->addWidget(plan_button_);
  row->addWidget(cancel_);
  return bar;
}

QWidget* PlanPage::buildActions() {
  auto* bar = new QWidget(this);
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  simulate_ = new QPushButton(tr("Simulate"), bar);
  simulate_->setObjectName(QStringLiteral("simulateLayout"));
  simulate_->setToolTip(tr("Store the selected layout's simulated run and open it like any run"));
  connect(simulate_, &QPushButton::clicked, this, &PlanPage::simulateSelected);
  run_ = new QPushButton(tr("Run this layout"), bar);
  run_->setObjectName(QStringLiteral("runLayout"));
  run_->setToolTip(tr("Set the job setup form to the selected layout and launch it"));
  connect(run_, &QPushButton::clicked, this, &PlanPage::runSelected);
  row->addWidget(simulate_);
  row->addWidget(run_);
  row->addStretch(1);
  return bar;
}

void PlanPage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  takeFormRanks();
}

void PlanPage::takeFormRanks() {
  if (ranks_chosen_) return;
  const QSignalBlocker quiet(ranks_);  // the form's count, until the user picks another
  ranks_->setValue(std::max(1, QString::fromStdString(draft_.value("parallel.ranks")).toInt()));
}

QStringList PlanPage::calibrationArgs() const {
  const QString file = calibration_->text().trimmed();
  if (file.isEmpty()) return {};
  return {QStringLiteral("--calibration"), file};
}

void PlanPage::plan() {
  takeFormRanks();
  QStringList args = {QStringLiteral("--ranks"), QString::number(ranks_->value()),
                      QStringLiteral("--top"), QString::number(kMostCandidates)};
  if (const QString memory = memory_->text().trimmed(); !memory.isEmpty())
    args << QStringLiteral("--memory-per-rank") << memory;
  args << calibrationArgs();
  if (startCommand(QStringLiteral("plan"), args,
                   tr("Planning %1 on %2 ranks…")
                       .arg(QString::fromStdString(draft_.value("name")))
                       .arg(ranks_->value())))
    model_->clear();
}

void PlanPage::planOn(int ranks) {
  ranks_->setValue(ranks);  // as if chosen: the form's count no longer replaces it
  plan();
}

void PlanPage::simulateSelected() {
  const int row = selectedRow();
  if (row < 0) return;
  QStringList args;
  for (const QString& o : model_->candidateAt(row).overrides) args << QStringLiteral("--set") << o;
  args << calibrationArgs();
  startCommand(QStringLiteral("simulate"), args,
               tr("Simulating %1…").arg(PlanTableModel::layoutText(model_->candidateAt(row))));
}

void PlanPage::runSelected() {
  if (const int row = selectedRow(); row >= 0)
    emit runLayoutRequested(model_->candidateAt(row).overrides);
}

// The form's job, refused here while invalid (the setup page marks why).
bool PlanPage::startCommand(const QString& verb, const QStringList& args, const QString& status) {
  if (!draft_.valid()) {
    status_->setText(tr("The job of the setup form has problems; fix them there first: %1")
                         .arg(QString::fromStdString(draft_.issues().front().str())));
    if (verb == QLatin1String("plan")) emit planFinished(status_->text());
    return false;
  }
  const QString error = command_->start(verb, QString::fromStdString(draft_.tomlText()), args);
  if (!error.isEmpty()) {
    status_->setText(tr("Cannot %1: %2").arg(verb, error));
    if (verb == QLatin1String("plan")) emit planFinished(status_->text());
    return false;
  }
  verb_ = verb;
  clock_.start();
  appendLog(QStringLiteral("$ ") + command_->lastCommand().join(QLatin1Char(' ')));
  status_->setText(status);
  updateActions();
  return true;
}

void PlanPage::onCommandFinished(const QByteArray& output, const QString& error) {
  const QString verb = verb_;
  verb_.clear();
  updateActions();
  if (!error.isEmpty()) {
    status_->setText(tr("%1 failed: %2").arg(verb, error));
    if (verb == QLatin1String("plan")) emit planFinished(status_->text());
    return;
  }
  if (verb == QLatin1String("plan"))
    showPlan(output);
  else
    showSimulated(output);
}

void PlanPage::showPlan(const QByteArray& output) {
  Plan plan;
  QString error;
  if (!parsePlanJson(output, &plan, &error)) {
    status_->setText(tr("plan failed: %1").arg(error));
    emit planFinished(status_->text());
    return;
  }
  const auto over = std::count_if(plan.candidates.begin(), plan.candidates.end(),
                                  [](const PlannedLayout& c) { return !c.fits; });
  QString text = tr("%1 layouts on %2 ranks predicted in %3 s, fastest per sample first")
                     .arg(plan.layouts)
                     .arg(ranks_->value())
                     .arg(clock_.elapsed() / 1000.0, 0, 'f', 1);
  if (int(plan.candidates.size()) < plan.layouts)
    text += tr(" (the best %1 shown)").arg(plan.candidates.size());
  text += tr("; memory limit %1 per rank").arg(bytesText(plan.memory_limit_bytes));
  if (over > 0) text += tr(", %1 over it").arg(over);
  text += tr("; calibration of %1.").arg(plan.calibration);
  model_->setPlan(std::move(plan));
  view_->sortByColumn(PlanTableModel::RankColumn, Qt::AscendingOrder);
  view_->resizeColumnsToContents();
  if (model_->rowCount() > 0) view_->selectRow(0);
  status_->setText(text);
  emit planFinished({});
}

void PlanPage::showSimulated(const QByteArray& output) {
  const qint64 id = QJsonDocument::fromJson(output).object().value(QLatin1String("id")).toInteger();
  if (id <= 0) {
    status_->setText(tr("simulate printed no run id"));
    return;
  }
  status_->setText(tr("Simulated run %1 stored; opening it.").arg(id));
  emit simulated(id);
}

void PlanPage::updateActions() {
  const bool busy = command_->isRunning();
  const bool chosen = selectedRow() >= 0;
  plan_button_->setEnabled(!busy);
  cancel_->setEnabled(busy);
  simulate_->setEnabled(!busy && chosen);
  run_->setEnabled(!busy && chosen);
}

int PlanPage::selectedRow() const {
  const QModelIndexList rows = view_->selectionModel()->selectedRows();
  return rows.isEmpty() ? -1 : proxy_->mapToSource(rows.front()).row();
}

void PlanPage::appendLog(const QString& line) {
  log_->appendPlainText(line);
}

}  // namespace ranklab
