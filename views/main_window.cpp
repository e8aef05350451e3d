#include "views/main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTableView>
#include <QToolBar>

#include "views/live_page.h"
#include "views/models/live_run_model.h"
#include "views/models/runs_table_model.h"

namespace ranklab {

namespace {

LaunchOptions launchOptions(const WorkbenchOptions& options) {
  LaunchOptions launch;
  launch.db_path = options.db_path.toStdString();
  launch.worker_path = options.worker_path.toStdString();
  return launch;
}

QString storedHeadline(const RunRow& run) {
  QString text = QObject::tr("run %1 · %2 · %3 · %4 ranks")
                     .arg(run.id)
                     .arg(QString::fromStdString(run.name), QString::fromStdString(run.status))
                     .arg(run.world);
  if (!run.strategy.empty()) text += QStringLiteral(" · ") + QString::fromStdString(run.strategy);
  if (!run.algorithm.empty()) text += QStringLiteral("/") + QString::fromStdString(run.algorithm);
  return text;
}

}  // namespace

MainWindow::MainWindow(WorkbenchOptions options, QWidget* parent)
    : QMainWindow(parent),
      options_(std::move(options)),
      reader_(new RunStoreReader(options_.db_path, this)),
      session_(new RunSession(launchOptions(options_), this)),
      runs_model_(new RunsTableModel(this)),
      runs_proxy_(new QSortFilterProxyModel(this)),
      live_model_(new LiveRunModel(this)),
      stored_model_(new LiveRunModel(this)),
      page_(new LivePage(this)),
      log_(new QPlainTextEdit(this)) {
  setWindowTitle(tr("ranklab — %1").arg(QDir::toNativeSeparators(options_.db_path)));
  buildToolbar();

  log_->setObjectName(QStringLiteral("runLog"));
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(2000);
  log_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  log_->setPlaceholderText(tr("Output of the launched run appears here."));

  auto* right = new QSplitter(Qt::Vertical, this);
  right->addWidget(page_);
  right->addWidget(log_);
  right->setStretchFactor(0, 5);
  right->setStretchFactor(1, 1);

  auto* central = new QSplitter(Qt::Horizontal, this);
  central->addWidget(buildRunsPane());
  central->addWidget(right);
  central->setStretchFactor(0, 2);
  central->setStretchFactor(1, 5);
  central->setSizes({670, 730});
  setCentralWidget(central);
  resize(1400, 860);

  connect(reader_, &RunStoreReader::runsListed, this, &MainWindow::onRunsListed);
  connect(reader_, &RunStoreReader::runLoaded, this, &MainWindow::onRunLoaded);
  connect(reader_, &RunStoreReader::failed, this, [this](const QString& message) {
    showError(tr("Run store"), message);
    if (first_listing_) onFirstListingDone();
  });

  connect(session_, &RunSession::started, this, &MainWindow::onStarted);
  connect(session_, &RunSession::stepReceived, live_model_, &LiveRunModel::addStep);
  connect(session_, &RunSession::evalReceived, live_model_, &LiveRunModel::addEval);
  connect(session_, &RunSession::eventReceived, this, [this](const EventRow& e) {
    appendLog(QStringLiteral("[%1 rank %2 step %3] %4")
                  .arg(QString::fromStdString(e.kind))
                  .arg(e.rank)
                  .arg(e.step)
                  .arg(QString::fromStdString(e.text)));
  });
  connect(session_, &RunSession::outputLine, this, [this](int rank, bool, const QString& line) {
    appendLog(rank < 0 ? line : QStringLiteral("[rank %1] %2").arg(rank).arg(line));
  });
  connect(session_, &RunSession::ended, this, &MainWindow::onEnded);

  page_->setModel(stored_model_);
  setJobPath(options_.job_path);
  refreshRuns();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildToolbar() {
  QToolBar* bar = addToolBar(tr("Job"));
  bar->setObjectName(QStringLiteral("jobToolbar"));
  bar->setMovable(false);
  bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);

  auto* label = new QLabel(tr(" Job file: "), bar);
  job_edit_ = new QLineEdit(bar);
  job_edit_->setObjectName(QStringLiteral("jobPath"));
  job_edit_->setReadOnly(true);
  job_edit_->setMinimumWidth(420);
  bar->addWidget(label);
  bar->addWidget(job_edit_);

  open_action_ = bar->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("Open job…"),
                                this, &MainWindow::openJobDialog);
  launch_action_ = bar->addAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("Launch"), this,
                                  &MainWindow::launch);
  stop_action_ = bar->addAction(style()->standardIcon(QStyle::SP_MediaStop), tr("Stop"), this,
                                &MainWindow::stop);
  launch_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
}

QWidget* MainWindow::buildRunsPane() {
  runs_proxy_->setSourceModel(runs_model_);
  runs_proxy_->setSortRole(RunsTableModel::SortRole);

  runs_view_ = new QTableView(this);
  runs_view_->setObjectName(QStringLiteral("runsView"));
  runs_view_->setModel(runs_proxy_);
  runs_view_->setSortingEnabled(true);
  runs_view_->sortByColumn(RunsTableModel::IdColumn, Qt::DescendingOrder);
  runs_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  runs_view_->setSelectionMode(QAbstractItemView::SingleSelection);
  runs_view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  runs_view_->setAlternatingRowColors(true);
  runs_view_->verticalHeader()->hide();
  runs_view_->horizontalHeader()->setStretchLastSection(true);
  runs_view_->setMinimumWidth(380);
  connect(runs_view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &MainWindow::onCurrentRunChanged);
  return runs_view_;
}

void MainWindow::setJobPath(const QString& path) {
  options_.job_path = path;
  job_edit_->setText(path.isEmpty() ? tr("(none — use Open job…)")
                                    : QDir::toNativeSeparators(path));
  job_edit_->setToolTip(path);
  updateActions();
}

void MainWindow::openJobDialog() {
  const QString start =
      options_.job_path.isEmpty() ? QDir::homePath() : QFileInfo(options_.job_path).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open job"), start,
                                                    tr("Job files (*.toml);;All files (*)"));
  if (!path.isEmpty()) setJobPath(path);
}

bool MainWindow::isRunning() const {
  return session_->isRunning();
}

void MainWindow::updateActions() {
  const bool running = isRunning();
  launch_action_->setEnabled(!running && !options_.job_path.isEmpty());
  open_action_->setEnabled(!running);
  stop_action_->setEnabled(running);
}

void MainWindow::launch() {
  if (isRunning()) return;
  if (first_listing_) {
    launch_pending_ = true;
    return;
  }
  if (options_.job_path.isEmpty()) {
    showError(tr("Launch"), tr("No job file: choose one with Open job…"));
    return;
  }
  live_run_id_ = 0;
  loading_run_id_ = 0;  // a stored run still loading must not replace the live page
  live_model_->reset();
  log_->clear();
  if (!session_->start(options_.job_path, options_.overrides)) return;
  shown_run_id_ = -1;
  runs_view_->selectionModel()->clearSelection();
  page_->setModel(live_model_);
  page_->setHeadline(tr("starting %1…").arg(QFileInfo(options_.job_path).fileName()));
  statusBar()->showMessage(tr("Launching %1").arg(options_.job_path));
  updateActions();
}

void MainWindow::stop() {
  if (!isRunning()) return;
  session_->stop();
  statusBar()->showMessage(tr("Stopping run %1…").arg(live_run_id_));
}

void MainWindow::onStarted(qint64 run_id, const QStringList& command) {
  live_run_id_ = run_id;
  live_model_->setRunId(run_id);
  if (shown_run_id_ == -1) shown_run_id_ = run_id;
  if (shown_run_id_ == run_id) page_->setHeadline(tr("run %1 · running").arg(run_id));
  appendLog(QStringLiteral("$ ") + command.join(QLatin1Char(' ')));
  statusBar()->showMessage(tr("Run %1 started").arg(run_id));
  refreshRuns();  // lists it as running
}

void MainWindow::onEnded(const RunOutcome& outcome) {
  const QString status = QString::fromStdString(outcome.status);
  if (outcome.run_id != 0) live_run_id_ = outcome.run_id;
  if (shown_run_id_ == -1 || shown_run_id_ == outcome.run_id) {
    page_->setHeadline(outcome.run_id ? tr("run %1 · %2").arg(outcome.run_id).arg(status)
                                      : tr("not started"));
    page_->refreshNow();
  }
  if (outcome.error.empty()) {
    statusBar()->showMessage(tr("Run %1 %2").arg(outcome.run_id).arg(status));
  } else {
    showError(tr("Run %1 %2").arg(outcome.run_id).arg(status),
              QString::fromStdString(outcome.error));
  }
  updateActions();
  refreshRuns();
  emit runEnded(outcome);
}

void MainWindow::refreshRuns() {
  reader_->listRuns();
}

void MainWindow::onRunsListed(const RunList& list) {
  runs_model_->setRuns(list.runs, list.summaries);
  runs_view_->resizeColumnsToContents();
  if (shown_run_id_ > 0) {
    selectRun(shown_run_id_);
  } else if (first_listing_ && !launch_pending_ && shown_run_id_ == 0 && !list.runs.empty()) {
    selectRun(list.runs.front().id);  // open on the newest run rather than an empty page
  }
  if (first_listing_) onFirstListingDone();
  emit runsRefreshed();
}

void MainWindow::onFirstListingDone() {
  first_listing_ = false;
  if (launch_pending_) {
    launch_pending_ = false;
    launch();
  }
}

void MainWindow::selectRun(int64_t run_id) {
  const int row = runs_model_->rowOfRun(run_id);
  if (row < 0) return;
  const QModelIndex index = runs_proxy_->mapFromSource(runs_model_->index(row, 0));
  runs_view_->selectionModel()->setCurrentIndex(
      index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  runs_view_->scrollTo(index);
}

void MainWindow::onCurrentRunChanged() {
  const QModelIndex current = runs_view_->selectionModel()->currentIndex();
  if (!current.isValid()) return;
  const int64_t run_id = current.data(RunsTableModel::RunIdRole).toLongLong();
  if (run_id == shown_run_id_) return;
  if (run_id == live_run_id_ && isRunning()) {
    showLive();
    return;
  }
  loading_run_id_ = run_id;
  reader_->loadRun(run_id);
  statusBar()->showMessage(tr("Loading run %1…").arg(run_id));
}

void MainWindow::showLive() {
  shown_run_id_ = live_run_id_;
  page_->setModel(live_model_);
  page_->setHeadline(tr("run %1 · running").arg(live_run_id_));
  emit runShown(live_run_id_);
}

void MainWindow::onRunLoaded(const StoredRun& run) {
  const RunRow& row = run.summary.run;
  if (row.id != loading_run_id_) return;
  loading_run_id_ = 0;
  shown_run_id_ = row.id;
  stored_model_->load(row.id, run.steps, run.evals);
  page_->setModel(stored_model_);
  page_->setHeadline(storedHeadline(row));
  page_->refreshNow();
  statusBar()->showMessage(
      tr("Run %1: %2 steps from %3 ranks").arg(row.id).arg(run.steps.size()).arg(row.world));
  emit runShown(row.id);
}

void MainWindow::showError(const QString& what, const QString& message) {
  statusBar()->showMessage(what + QStringLiteral(": ") + message.section(QLatin1Char('\n'), 0, 0));
  appendLog(what + QStringLiteral(": ") + message);
  // Window-modal but not blocking: a run, a test or a screenshot timer keeps going.
  auto* box = new QMessageBox(QMessageBox::Warning, what, message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

void MainWindow::appendLog(const QString& line) {
  log_->appendPlainText(line);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (isRunning()) {
    statusBar()->showMessage(tr("Stopping run %1 before closing…").arg(live_run_id_));
    session_->stop();  // ~RunSession waits for the run thread
  }
  event->accept();
}

}  // namespace ranklab
