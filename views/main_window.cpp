#include "views/main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QMessageBox>
#include <QScreen>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <cstdlib>
#include <utility>

#include "engine/job/job_file.h"
#include "engine/job/stored_job.h"
#include "engine/job/strategy_traits.h"
#include "launch/follow_record.h"
#include "storage/run_origin.h"
#include "views/analysis_page.h"
#include "views/compare_page.h"
#include "views/learn_page.h"
#include "views/live_page.h"
#include "views/models/live_run_model.h"
#include "views/models/log_model.h"
#include "views/models/runs_table_model.h"
#include "views/models/workbench_settings.h"
#include "views/plan_page.h"
#include "views/runs_page.h"
#include "views/setup_page.h"
#include "views/timeline_page.h"

namespace ranklab {

namespace {

LaunchOptions launchOptions(const WorkbenchOptions& options) {
  LaunchOptions launch;
  launch.db_path = options.db_path.toStdString();
  launch.worker_path = options.worker_path.toStdString();
  launch.launcher_path = options.launcher_path.toStdString();
  launch.allow_foreign_store = options.allow_foreign_store;
  return launch;
}

JobCommandOptions commandOptions(const WorkbenchOptions& options) {
  return {options.launcher_path, options.worker_path, options.db_path, options.allow_foreign_store};
}

// The ranks that report steps: the world less a parameter server's server ranks, whose
// steps the live model would otherwise wait for before drawing the mean of ranks.
int trainingRanks(const RunRow& run) {
  const StoredJob stored = storedJobOf(run);
  return stored.job ? stored.job->parallel.ranks : run.world;
}

// Strategies whose ranks meet at a barrier every step (all-reducing, or servers that wait
// for every push): their timelines can be aligned.
bool syncsEveryStep(const QString& strategy) {
  const StrategyTraits& t = strategyTraitsOr(strategy.toStdString());
  return t.all_reduces_gradient || (t.parameter_servers && !t.applies_each_push);
}

QString storedHeadline(const RunRow& run) {
  QString text = QObject::tr("run %1 · %2 · %3 · %4 ranks")
                     .arg(run.id)
                     .arg(QString::fromStdString(run.name), QString::fromStdString(run.status))
                     .arg(run.world);
  if (!run.strategy.empty()) text += QStringLiteral(" · ") + QString::fromStdString(run.strategy);
  if (!run.algorithm.empty()) text += QStringLiteral("/") + QString::fromStdString(run.algorithm);
  // Its queue's states come as events (the output pane); the id says where to look in Slurm.
  if (!run.scheduler_job.empty())
    text += QObject::tr(" · slurm job %1").arg(QString::fromStdString(run.scheduler_job));
  return text;
}

}  // namespace

MainWindow::MainWindow(WorkbenchOptions options, QWidget* parent)
    : QMainWindow(parent),
      options_(std::move(options)),
      reader_(new RunStoreReader(options_.db_path, this)),
      session_(new RunSession(launchOptions(options_), this)),
      runs_model_(new RunsTableModel(this)),
      live_model_(new LiveRunModel(this)),
      stored_model_(new LiveRunModel(this)),
      log_model_(new LogModel(this)),
      tabs_(new QTabWidget(this)),
      setup_(new SetupPage(launchOptions(options_), options_.presets_dir, this)),
      plan_page_(new PlanPage(setup_->draft(), commandOptions(options_), this)),
      page_(new LivePage(log_model_, this)),
      runs_page_(new RunsPage(runs_model_, this)),
      compare_page_(new ComparePage(runs_model_, this)),
      timeline_page_(new TimelinePage(this)),
      analysis_page_(new AnalysisPage(this)),
      learn_page_(new LearnPage(options_.presets_dir, commandOptions(options_), this)) {
  setWindowTitle(tr("ranklab workbench — %1").arg(QDir::toNativeSeparators(options_.db_path)));
  buildToolbar();

  buildPages();

  connect(reader_, &RunStoreReader::runsListed, this, &MainWindow::onRunsListed);
  connect(reader_, &RunStoreReader::runLoaded, this, &MainWindow::onRunLoaded);
  connect(reader_, &RunStoreReader::failed, this, [this](const QString& message) {
    showError(tr("Run store"), message);
    loading_run_id_ = 0;          // the run may be asked for again
    analysis_page_->setFailed();  // whichever was waiting waits no more
    timeline_page_->setFailed();
    if (first_listing_) onFirstListingDone();
  });
  connectSession();
  connectRunsPage();
  connectStoredRunPages();
  connectPlanPage();
  connect(live_model_, &LiveRunModel::updated, this, [this] {
    if (runs_page_->isVisible() && runs_page_->currentRunId() == live_run_id_ &&
        preview_clock_.elapsed() >= kLivePreviewMs)
      previewLiveRun();
    if (shown_run_id_ == live_run_id_ && live_run_id_ > 0)
      timeline_page_->setLatestStep(live_model_->latestStep());
  });
  connect(setup_, &SetupPage::launchRequested, this, [this] { launch(); });
  connectLearnPage();
  connect(launch_action_, &QAction::triggered, this, [this] { launch(); });
  connect(setup_, &SetupPage::message, this,
          [this](const QString& text) { statusBar()->showMessage(text, 8000); });

  page_->setModel(stored_model_);
  runs_page_->setDbPath(options_.db_path);
  setJobPath(options_.job_path);
  applyOverrides(options_.overrides);
  updateActions();
  // A run asked for is read beside the runs list, not after it: a big store's list takes
  // seconds to sum.
  if (options_.open_run > 0) openRun(options_.open_run);
  refreshRuns();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildPages() {
  tabs_->setObjectName(QStringLiteral("pages"));
  tabs_->setDocumentMode(true);
  tabs_->addTab(setup_, tr("Job setup"));
  tabs_->addTab(plan_page_, tr("Plan"));
  tabs_->addTab(page_, tr("Live monitor"));
  tabs_->addTab(timeline_page_, tr("Timeline"));
  tabs_->addTab(analysis_page_, tr("Analysis"));
  tabs_->addTab(runs_page_, tr("Runs"));
  tabs_->addTab(compare_page_, tr("Compare"));
  tabs_->addTab(learn_page_, tr("Learn"));
  setCentralWidget(tabs_);
  // As large as a 1600x1000 screen allows; a smaller screen gets its available area.
  QSize size(1600, 1000);
  if (const QScreen* screen = QGuiApplication::primaryScreen())
    size = size.boundedTo(screen->availableSize());
  resize(size);
  if (const QByteArray geometry = WorkbenchSettings::windowGeometry(); !geometry.isEmpty())
    restoreGeometry(geometry);
}

void MainWindow::connectLearnPage() {
  // A lesson's preset goes through the setup page like any job; the Learn page stays shown.
  learn_page_->setDbPath(options_.db_path);
  connect(learn_page_, &LearnPage::runRequested, this,
          [this](const QString& preset, const QStringList& overrides) {
            setJobPath(preset);
            applyOverrides(overrides);
            launch(false);
            if (!isRunning() && !launch_pending_) {
              RunOutcome refused;
              refused.error = "the job was refused (the setup page says why)";
              learn_page_->runEnded(refused);
            }
          });
}

void MainWindow::buildToolbar() {
  QToolBar* bar = addToolBar(tr("Run"));
  bar->setObjectName(QStringLiteral("runToolbar"));
  bar->setMovable(false);
  bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  launch_action_ = bar->addAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("Launch"));
  stop_action_ = bar->addAction(style()->standardIcon(QStyle::SP_MediaStop), tr("Stop"), this,
                                &MainWindow::stop);
  launch_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  simulate_action_ = bar->addAction(style()->standardIcon(QStyle::SP_MediaSeekForward),
                                    tr("Simulate"), this, [this] { simulate(); });
  simulate_action_->setObjectName(QStringLiteral("simulateAction"));
  simulate_action_->setToolTip(
      tr("Simulate the job live on its ranks (as many as parallel.ranks, a thousand too): "
         "their records sent through the collector at simulate.rate steps a second"));
}

void MainWindow::connectSession() {
  connect(session_, &RunSession::started, this, &MainWindow::onStarted);
  connect(session_, &RunSession::stepsReceived, live_model_, &LiveRunModel::addSteps);
  connect(session_, &RunSession::evalReceived, live_model_, &LiveRunModel::addEval);
  connect(session_, &RunSession::serverLoadReceived, live_model_, &LiveRunModel::addServerLoad);
  connect(session_, &RunSession::ranksChanged, live_model_, &LiveRunModel::setRanks);
  connect(session_, &RunSession::eventReceived, this, [this](const EventRow& e) {
    // The store rolled back to the checkpoint: so does the live picture, or the re-trained
    // steps would be drawn twice.
    if (e.kind == "restart") live_model_->rollBack(e.step);
    live_model_->addEvent(e);
    // One log line per line of the text (a GPT's sample is verse), the first with its kind.
    const QStringList lines = QString::fromStdString(e.text).split(QLatin1Char('\n'));
    appendLog(e.rank, e.kind == "error",
              QStringLiteral("[%1 at step %2] %3")
                  .arg(QString::fromStdString(e.kind))
                  .arg(e.step)
                  .arg(lines.front()));
    for (qsizetype i = 1; i < lines.size(); ++i)
      appendLog(e.rank, false, QStringLiteral("    | ") + lines[i]);
  });
  connect(session_, &RunSession::outputLine, this, &MainWindow::appendLog);
  connect(page_, &LivePage::faultRequested, this, [this](int rank, const QString& action) {
    if (page_->model() != live_model_ || !session_->injectFault(rank, action)) {
      statusBar()->showMessage(tr("No run of this window is running: nothing to %1").arg(action));
      return;
    }
    statusBar()->showMessage(tr("%1 sent to rank %2").arg(action).arg(rank), 8000);
  });
  connect(session_, &RunSession::ended, this, &MainWindow::onEnded);
}

void MainWindow::connectRunsPage() {
  connect(runs_page_, &RunsPage::openRequested, this, [this](qint64 id) {
    openRun(id);
    showPage(LiveTab);
  });
  connect(runs_page_, &RunsPage::openDbRequested, this, &MainWindow::openDb);
  connect(runs_page_, &RunsPage::currentRunChanged, this, [this](qint64 id) {
    if (id == live_run_id_ && isRunning())
      previewLiveRun();
    else if (id > 0)
      reader_->loadPreview(id);
  });
  connect(reader_, &RunStoreReader::previewLoaded, runs_page_,
          qOverload<const StoredRun&>(&RunsPage::showPreview));
  connect(runs_page_, &RunsPage::renameRequested, reader_, &RunStoreReader::renameRun);
  connect(runs_page_, &RunsPage::tagsRequested, reader_, &RunStoreReader::setTags);
  connect(runs_page_, &RunsPage::exportCsvRequested, reader_, &RunStoreReader::exportCsv);
  connect(runs_page_, &RunsPage::exportTraceRequested, reader_, &RunStoreReader::exportTrace);
  connect(runs_page_, &RunsPage::deleteRequested, this, [this](const QList<qint64>& ids) {
    if (isRunning() && ids.contains(live_run_id_)) {
      showError(tr("Delete"), tr("Run %1 is still running; stop it first.").arg(live_run_id_));
      return;
    }
    if (ids.contains(shown_run_id_)) {  // its rows are about to go: stop showing them
      shown_run_id_ = 0;
      stored_model_->reset();
      page_->setHeadline(QString());
    }
    reader_->deleteRuns(ids);
  });
  connect(runs_page_, &RunsPage::compareRequested, this, &MainWindow::compareRuns);
  connect(runs_page_, &RunsPage::resumeRequested, this, [this](qint64 id, int ranks) {
    if (const int row = runs_model_->rowOfRun(id); row >= 0) resume(runs_model_->runAt(row), ranks);
  });
  connect(compare_page_, &ComparePage::compareRequested, this, &MainWindow::compareRuns);
  connect(compare_page_, &ComparePage::diffRequested, reader_, &RunStoreReader::diffRuns);
  connect(reader_, &RunStoreReader::diffLoaded, compare_page_, &ComparePage::setDiff);
  connect(reader_, &RunStoreReader::runsLoaded, this, [this](const std::vector<StoredRun>& runs) {
    std::vector<ComparedRun> compared;
    for (const StoredRun& r : runs) compared.push_back({r.run, r.series, r.prediction});
    compare_page_->setRuns(std::move(compared));
    statusBar()->showMessage(tr("Comparing %n run(s)", "", int(runs.size())), 5000);
  });
  connect(reader_, &RunStoreReader::changed, this, [this](const QString& message) {
    statusBar()->showMessage(message, 8000);
    refreshRuns();
  });
}

// The timeline and analysis pages ask the store reader for what they draw.
void MainWindow::connectStoredRunPages() {
  connect(timeline_page_, &TimelinePage::timelineRequested, reader_, &RunStoreReader::loadTimeline);
  connect(reader_, &RunStoreReader::timelineProgress, timeline_page_, &TimelinePage::setProgress);
  connect(reader_, &RunStoreReader::timelineLoaded, timeline_page_, &TimelinePage::setTimeline);
  connect(analysis_page_, &AnalysisPage::analysisRequested, reader_, &RunStoreReader::analyzeRun);
  connect(reader_, &RunStoreReader::analysisLoaded, analysis_page_, &AnalysisPage::setAnalysis);
}

// A simulated run opens like any stored run; a layout to run goes through the setup form and
// its launch, so the form shows what ran.
void MainWindow::connectPlanPage() {
  connect(plan_page_, &PlanPage::simulated, this, [this](qint64 id) {
    refreshRuns();
    openRun(id);
    showPage(LiveTab);
  });
  connect(plan_page_, &PlanPage::runLayoutRequested, this, [this](const QStringList& overrides) {
    if (isRunning()) {
      showError(tr("Run this layout"),
                tr("Run %1 is still going; stop it first.").arg(live_run_id_));
      return;
    }
    applyOverrides(overrides);
    launch();
    if (isRunning()) showPage(LiveTab);
  });
}

void MainWindow::setJobPath(const QString& path) {
  options_.job_path = path;
  if (!path.isEmpty()) setup_->loadFile(path);
}

QString MainWindow::jobPath() const {
  return setup_->filePath();
}

void MainWindow::applyOverrides(const QStringList& overrides) {
  for (const QString& o : overrides) {
    const int equals = o.indexOf(QLatin1Char('='));
    const std::string path = o.left(equals).trimmed().toStdString();
    QString value = o.mid(equals + 1).trimmed();
    const JobKey* key = equals > 0 ? findJobKey(path) : nullptr;
    if (!key) {
      showError(tr("--set"), tr("%1: not a key of the job file (section.key=value)").arg(o));
      continue;
    }
    const bool is_text = key->kind == JobValueKind::Text || key->kind == JobValueKind::Choice;
    if (is_text && value.size() >= 2 && value.startsWith(QLatin1Char('"')) &&
        value.endsWith(QLatin1Char('"')))
      value = value.mid(1, value.size() - 2);
    setup_->setValue(QString::fromStdString(path), value);
  }
}

bool MainWindow::isRunning() const {
  return session_->isRunning();
}

void MainWindow::updateActions() {
  const bool running = isRunning();
  launch_action_->setEnabled(!running);
  simulate_action_->setEnabled(!running);
  stop_action_->setEnabled(running);
  setup_->setRunning(running);
  page_->setFaultsEnabled(running);
}

void MainWindow::simulate(bool show_monitor) {
  launch_simulates_ = true;
  launch(show_monitor);
}

void MainWindow::launch(bool show_monitor) {
  if (isRunning()) {
    launch_simulates_ = false;
    return;
  }
  launch_shows_monitor_ = show_monitor;
  if (first_listing_) {
    launch_pending_ = true;  // launched, or simulated, once the runs are listed
    return;
  }
  const bool simulated = std::exchange(launch_simulates_, false);
  const JobDraft& draft = setup_->draft();
  if (!draft.valid()) {
    QStringList lines;
    for (const JobIssue& issue : draft.issues()) lines << QString::fromStdString(issue.str());
    showPage(SetupTab);
    showError(tr("Launch"), tr("The job has problems; fix them first:\n%1").arg(lines.join('\n')));
    return;
  }
  clearLivePage(std::atoi(draft.value("parallel.ranks").c_str()),
                QString::fromStdString(draft.value("parallel.strategy")));
  live_model_->setSimulated(simulated);
  const QString text = QString::fromStdString(draft.tomlText());
  if (!(simulated ? session_->simulateText(text, setup_->filePath())
                  : session_->startText(text, setup_->filePath())))
    return;
  const QString name = QString::fromStdString(draft.value("name"));
  showFollowedRun(tr("starting %1…").arg(name), tr("Launching %1").arg(name));
  if (launch_shows_monitor_ && tabs_->currentIndex() == SetupTab) showPage(LiveTab);
}

bool MainWindow::attach(const RunRow& run) {
  if (isRunning()) return false;
  clearLivePage(trainingRanks(run), QString::fromStdString(run.strategy));
  live_model_->setSimulated(originOf(run) == RunOrigin::kSimulated);
  if (!session_->attach(run.id)) return false;
  showFollowedRun(tr("following run %1…").arg(run.id),
                  tr("Following run %1, still going").arg(run.id));
  live_run_id_ = run.id;  // known now: opening it (--open) shows this, not a stored snapshot
  return true;
}

bool MainWindow::takeOverSlurmRuns(const std::vector<RunRow>& runs) {
  if (launch_pending_) return false;
  const std::string folder = slurmFolderOf(options_.db_path.toStdString());
  bool followed = false;
  for (const RunRow& run : runs) {
    if (run.status != "lost" || run.scheduler_job.empty()) continue;
    if (!QFileInfo::exists(
            QString::fromStdString(followRecordPath(folder, run.id, run.scheduler_job))))
      continue;
    if (followed || isRunning()) {
      const QString error = session_->takeOverUnfollowed(run.id);
      if (!error.isEmpty()) showError(tr("Take over run %1").arg(run.id), error);
      continue;
    }
    clearLivePage(trainingRanks(run), QString::fromStdString(run.strategy));
    followed = session_->takeOver(run.id);
    if (followed)
      showFollowedRun(tr("taking over run %1…").arg(run.id),
                      tr("Taking over run %1: its launcher is gone, Slurm job %2 runs on")
                          .arg(run.id)
                          .arg(QString::fromStdString(run.scheduler_job)));
  }
  return followed;
}

bool MainWindow::resume(const RunRow& run, int ranks) {
  if (isRunning()) {
    showError(tr("Resume"), tr("Run %1 is still going; stop it first.").arg(live_run_id_));
    return false;
  }
  clearLivePage(ranks, QString::fromStdString(run.strategy));
  if (!session_->resume(run.id, ranks)) return false;
  showFollowedRun(tr("resuming run %1 on %2 ranks…").arg(run.id).arg(ranks),
                  tr("Resuming run %1 from its checkpoint").arg(run.id));
  showPage(LiveTab);
  return true;
}

// The live page empties for a run about to be followed.
void MainWindow::clearLivePage(int world, const QString& strategy) {
  live_run_id_ = 0;
  loading_run_id_ = 0;  // a stored run still loading must not replace the live page
  live_model_->reset();
  live_model_->setWorld(world);
  live_strategy_ = strategy;
  log_model_->clear();
}

// The live page shows the followed run, whose id onStarted() will tell.
void MainWindow::showFollowedRun(const QString& headline, const QString& status) {
  shown_run_id_ = -1;
  page_->setModel(live_model_);
  page_->setHeadline(headline);
  statusBar()->showMessage(status);
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
  if (shown_run_id_ == run_id) {
    page_->setHeadline(tr("run %1 · running").arg(run_id));
    // live: the window ends at the last step every rank has stored, not at the live model's
    // newest step, which the store (and the slowest rank) may not have reached yet.
    timeline_page_->setRun(run_id, tr("run %1 · running").arg(run_id),
                           syncsEveryStep(live_strategy_), -1, true);
  }
  // A run followed by id (attach, take over) has no command of this workbench's.
  if (!command.isEmpty())
    appendLog(-1, false, QStringLiteral("$ ") + command.join(QLatin1Char(' ')));
  statusBar()->showMessage(command.isEmpty() ? tr("Following run %1, still going").arg(run_id)
                                             : tr("Run %1 started").arg(run_id));
  refreshRuns();  // lists it as running
}

void MainWindow::onEnded(const RunOutcome& outcome) {
  const QString status = QString::fromStdString(outcome.status);
  if (outcome.run_id != 0) live_run_id_ = outcome.run_id;
  live_model_->finish(outcome.status);
  if (shown_run_id_ == -1 || shown_run_id_ == outcome.run_id) {
    page_->setHeadline(outcome.run_id ? tr("run %1 · %2").arg(outcome.run_id).arg(status)
                                      : tr("not started"));
    page_->refreshNow();
    if (outcome.run_id)
      timeline_page_->setRun(outcome.run_id, tr("run %1 · %2").arg(outcome.run_id).arg(status),
                             syncsEveryStep(live_strategy_), live_model_->latestStep());
  }
  if (outcome.error.empty()) {
    statusBar()->showMessage(tr("Run %1 %2").arg(outcome.run_id).arg(status));
  } else {
    showError(tr("Run %1 %2").arg(outcome.run_id).arg(status),
              QString::fromStdString(outcome.error));
  }
  updateActions();
  refreshRuns();
  learn_page_->runEnded(outcome);
  emit runEnded(outcome);
}

void MainWindow::refreshRuns() {
  reader_->listRuns();
}

void MainWindow::onRunsListed(const RunList& list) {
  runs_model_->setRuns(list.runs, list.summaries, list.tags);
  runs_page_->view()->resizeColumnsToContents();
  // A full disk: every run still reads, and the window says why nothing can be stored for
  // as long as it lasts (a permanent part of the status bar: no passing message hides it).
  if (!list.read_only.empty() && !read_only_label_) {
    read_only_label_ = new QLabel(this);
    read_only_label_->setStyleSheet(QStringLiteral("color: #b00020; font-weight: bold"));
    statusBar()->addPermanentWidget(read_only_label_);
  }
  if (read_only_label_) {
    const bool full = list.read_only.find("the disk is full") != std::string::npos;
    read_only_label_->setText(full ? tr("Store read-only: the disk is full")
                                   : tr("Store read-only: written by a newer ranklab"));
    read_only_label_->setToolTip(QString::fromStdString(list.read_only));
    read_only_label_->setVisible(!list.read_only.empty());
  }
  if (shown_run_id_ > 0) selectRun(shown_run_id_);
  if (first_listing_) {
    // A run still going (launched by a workbench since closed, or from a terminal) is followed.
    // A Slurm run whose launcher is gone first: nobody receives its telemetry meanwhile.
    if (!takeOverSlurmRuns(list.runs))
      for (const RunRow& run : list.runs)
        if (run.status == "running" && !launch_pending_ && attach(run)) break;
    if (options_.open_run > 0)
      openRun(options_.open_run);
    else if (!launch_pending_ && shown_run_id_ == 0 && !list.runs.empty())
      openRun(list.runs.front().id);  // open on the newest run rather than an empty page
    if (options_.compare.size() >= 2) {
      compare_page_->checkRuns(options_.compare);
      reader_->loadRuns(options_.compare);
    }
    onFirstListingDone();
  }
  emit runsRefreshed();
}

void MainWindow::onFirstListingDone() {
  first_listing_ = false;
  if (launch_pending_) {
    launch_pending_ = false;
    launch(launch_shows_monitor_);
  }
}

QTableView* MainWindow::runsView() const {
  return runs_page_->view();
}

void MainWindow::selectRun(int64_t run_id) {
  runs_page_->selectRun(run_id);
}

void MainWindow::openRun(int64_t run_id) {
  selectRun(run_id);
  if (run_id == shown_run_id_ || run_id == loading_run_id_) return;
  if (run_id == live_run_id_ && isRunning()) {
    showLive();
    return;
  }
  loading_run_id_ = run_id;
  reader_->loadRun(run_id);
  statusBar()->showMessage(tr("Loading run %1…").arg(run_id));
}

// The runs page's chart of the running run, drawn from the live model (the store has no
// bins for it yet, and the model holds every step received).
void MainWindow::previewLiveRun() {
  preview_clock_.start();
  const int row = runs_model_->rowOfRun(live_run_id_);
  const QString name = row >= 0 ? QString::fromStdString(runs_model_->runAt(row).name) : QString();
  runs_page_->showPreview(live_run_id_, name, live_model_->series());
}

void MainWindow::showLive() {
  shown_run_id_ = live_run_id_;
  page_->setModel(live_model_);
  page_->setHeadline(tr("run %1 · running").arg(live_run_id_));
  timeline_page_->setRun(live_run_id_, tr("run %1 · running").arg(live_run_id_),
                         syncsEveryStep(live_strategy_), live_model_->latestStep(), true);
  analysis_page_->setRun(live_run_id_, tr("run %1 · running").arg(live_run_id_), true);
  emit runShown(live_run_id_);
}

void MainWindow::onRunLoaded(const StoredRun& run) {
  const RunRow& row = run.run;
  if (row.id != loading_run_id_) return;
  loading_run_id_ = 0;
  shown_run_id_ = row.id;
  stored_model_->load(row.id, run.series);
  page_->setModel(stored_model_);
  page_->setHeadline(storedHeadline(row));
  page_->refreshNow();
  timeline_page_->setRun(row.id, storedHeadline(row),
                         syncsEveryStep(QString::fromStdString(row.strategy)),
                         stored_model_->latestStep());
  analysis_page_->setRun(row.id, storedHeadline(row), row.status == "running");
  statusBar()->showMessage(
      tr("Run %1: %2 step rows from %3 ranks").arg(row.id).arg(run.step_rows).arg(row.world));
  emit runShown(row.id);
}

void MainWindow::compareRuns(const QList<qint64>& run_ids) {
  if (run_ids.size() < 2) {
    statusBar()->showMessage(tr("Pick two or more runs to compare"), 5000);
    return;
  }
  compare_page_->checkRuns(run_ids);
  reader_->loadRuns(run_ids);
  showPage(CompareTab);
}

void MainWindow::showPage(Page page) {
  tabs_->setCurrentIndex(int(page));
}

bool MainWindow::pageFromName(const QString& name, Page* page) {
  static const QStringList names = {QStringLiteral("setup"),    QStringLiteral("plan"),
                                    QStringLiteral("live"),     QStringLiteral("timeline"),
                                    QStringLiteral("analysis"), QStringLiteral("runs"),
                                    QStringLiteral("compare"),  QStringLiteral("learn")};
  const int index = names.indexOf(name.toLower());
  if (index < 0) return false;
  *page = Page(index);
  return true;
}

void MainWindow::openDb(const QString& path) {
  if (isRunning()) {
    showError(tr("Run store"), tr("Stop the run before switching to another run store."));
    return;
  }
  options_.db_path = path;
  reader_->setDbPath(path);
  session_->setDbPath(path);
  runs_page_->setDbPath(path);
  plan_page_->setDbPath(path);
  learn_page_->setDbPath(path);
  WorkbenchSettings::setLastDb(path);
  setWindowTitle(tr("ranklab workbench — %1").arg(QDir::toNativeSeparators(path)));
  shown_run_id_ = 0;
  stored_model_->reset();
  page_->setModel(stored_model_);
  page_->setHeadline(QString());
  refreshRuns();
}

void MainWindow::showError(const QString& what, const QString& message) {
  statusBar()->showMessage(what + QStringLiteral(": ") + message.section(QLatin1Char('\n'), 0, 0));
  appendLog(-1, true, what + QStringLiteral(": ") + message);
  // Window-modal but not blocking: a run, a test or a screenshot timer keeps going.
  auto* box = new QMessageBox(QMessageBox::Warning, what, message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

void MainWindow::appendLog(int rank, bool is_stderr, const QString& line) {
  log_model_->append(rank, is_stderr, line);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  WorkbenchSettings::setWindowLayout(saveGeometry(), saveState());
  // The run goes on in its launcher; the next workbench on this store follows it again.
  event->accept();
}

}  // namespace ranklab
