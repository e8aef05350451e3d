#include "views/run_session.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QThread>
#include <chrono>
#include <exception>
#include <thread>

#include "launch/detached_run.h"
#include "storage/private_files.h"

namespace ranklab {

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(100);

}  // namespace

RunWorker::RunWorker(FollowerMaker make_follower) : make_follower_(std::move(make_follower)) {}

void RunWorker::run() {
  try {
    follower_ = make_follower_();
    launcher_pid_ = follower_->launcherPid();
    bool going = true;
    while (going && !leave_) {
      going = follower_->poll(*this);
      emitPoll();
      for (auto waited = std::chrono::milliseconds(0); going && !leave_ && waited < kPollInterval;
           waited += std::chrono::milliseconds(10))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!leave_) emit ended(follower_->outcome());
  } catch (const std::exception& e) {
    RunOutcome outcome;
    outcome.run_id = follower_ ? follower_->runId() : 0;
    outcome.status = "failed";
    outcome.error = e.what();
    emit ended(outcome);
  }
}

void RunWorker::emitPoll() {
  if (!ranks_.empty()) emit ranksRead(ranks_);  // before the steps: a step's row exists
  ranks_.clear();
  if (steps_.empty()) return;
  emit stepsRead(steps_);
  steps_.clear();
}

void RunWorker::onStarted(int64_t run_id, const std::vector<std::string>& command) {
  QStringList words;
  for (const std::string& w : command) words << QString::fromStdString(w);
  emit started(run_id, words);
}

void RunWorker::onOutput(int rank, bool is_stderr, const std::string& line) {
  emit outputLine(rank, is_stderr, QString::fromStdString(line));
}

RunSession::RunSession(LaunchOptions options, QObject* parent)
    : QObject(parent), options_(std::move(options)), batcher_(new StepBatcher(this)) {
  registerRecordMetaTypes();
  qRegisterMetaType<RunOutcome>();
  connect(batcher_, &StepBatcher::batchReady, this, &RunSession::stepsReceived);
}

RunSession::~RunSession() {
  if (worker_) worker_->leave();
  joinThread();
}

bool RunSession::start(const QString& job_path, const QStringList& overrides) {
  return launch({"run", job_path.toStdString()}, overrides, {});
}

bool RunSession::startText(const QString& toml_text, const QString& job_path) {
  return launch({"run", job_path.toStdString()}, {}, toml_text);
}

bool RunSession::simulateText(const QString& toml_text, const QString& job_path) {
  return launch({"simulate", job_path.toStdString(), "--live"}, {}, toml_text);
}

bool RunSession::resume(qint64 run_id, int ranks) {
  return launch({"resume", std::to_string(run_id), "--ranks", std::to_string(ranks)}, {}, {});
}

// The launcher is `ranklab` with `command` (run JOB or resume ID), the job's text when given
// from a file in the launch folder, its console in that folder until the run's id names it.
bool RunSession::launch(const std::vector<std::string>& command, const QStringList& overrides,
                        const QString& toml_text) {
  if (isRunning()) return false;
  const QString folder = QString::fromStdString(launchFolder(options_.db_path));
  const QString stamp = QStringLiteral("%1-%2")
                            .arg(QDateTime::currentMSecsSinceEpoch())
                            .arg(QCoreApplication::applicationPid());
  const QString console = folder + QStringLiteral("/launch-%1.log").arg(stamp);
  const QString text_file =
      toml_text.isEmpty() ? QString() : folder + QStringLiteral("/launch-%1.toml").arg(stamp);
  std::vector<std::string> argv = {options_.launcher_path.empty() ? executableDir() + "/ranklab"
                                                                  : options_.launcher_path};
  argv.insert(argv.end(), command.begin(), command.end());
  argv.insert(argv.end(), {"--db", options_.db_path, "--quiet"});
  if (options_.allow_foreign_store) argv.push_back("--allow-foreign-store");
  if (!options_.worker_path.empty()) argv.insert(argv.end(), {"--worker", options_.worker_path});
  if (!text_file.isEmpty()) argv.insert(argv.end(), {"--text-from", text_file.toStdString()});
  for (const QString& o : overrides) argv.insert(argv.end(), {"--set", o.toStdString()});
  const std::string db = options_.db_path;
  auto make = [=]() -> std::unique_ptr<RunFollower> {
    // The job's text and the launcher's console: only in this account's own folder, new files.
    ensurePrivateFolder(folder.toStdString(), "the workbench's launch folder");
    if (!text_file.isEmpty()) writeNewPrivateFile(text_file.toStdString(), toml_text.toStdString());
    const int64_t pid = startDetached(argv, console.toStdString());
    return std::make_unique<RunFollower>(db, processOnThisHost(pid), console.toStdString(), argv);
  };
  auto* worker = new RunWorker(make);
  // Once the run has an id its console is named after it and the job's text has been read.
  connect(
      worker, &RunWorker::started, worker,
      [worker, db, console, text_file](qint64 id) {
        const QString named = QString::fromStdString(consolePath(db, id));
        if (QFile::rename(console, named)) worker->setConsolePath(named.toStdString());
        if (!text_file.isEmpty()) QFile::remove(text_file);
      },
      Qt::DirectConnection);
  // A launch refused before it made a run (its words are in the outcome) leaves nothing.
  connect(
      worker, &RunWorker::ended, worker,
      [console, text_file](const RunOutcome& outcome) {
        if (outcome.run_id != 0) return;
        QFile::remove(console);
        if (!text_file.isEmpty()) QFile::remove(text_file);
      },
      Qt::DirectConnection);
  return startWorker(worker);
}

bool RunSession::takeOver(qint64 run_id) {
  return launch({"runs", "attach", std::to_string(run_id)}, {}, {});
}

QString RunSession::takeOverUnfollowed(qint64 run_id) {
  const std::string launcher =
      options_.launcher_path.empty() ? executableDir() + "/ranklab" : options_.launcher_path;
  try {
    ensurePrivateFolder(launchFolder(options_.db_path), "the workbench's launch folder");
    std::vector<std::string> argv = {launcher, "runs",           "attach", std::to_string(run_id),
                                     "--db",   options_.db_path, "--quiet"};
    if (options_.allow_foreign_store) argv.push_back("--allow-foreign-store");
    startDetached(argv, consolePath(options_.db_path, run_id));
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

bool RunSession::attach(qint64 run_id) {
  if (isRunning()) return false;
  const std::string db = options_.db_path;
  const std::string console = consolePath(db, run_id);
  const std::string console_path =
      QFileInfo::exists(QString::fromStdString(console)) ? console : "";
  return startWorker(new RunWorker([db, run_id, console_path] {
    return std::make_unique<RunFollower>(db, run_id, console_path);
  }));
}

bool RunSession::startWorker(RunWorker* worker) {
  worker_ = worker;
  thread_ = new QThread(this);
  thread_->setObjectName(QStringLiteral("ranklab-follow"));
  worker_->moveToThread(thread_);

  // The worker lives on thread_, this on the UI thread: these connections are queued.
  connect(worker_, &RunWorker::started, this, &RunSession::started);
  connect(worker_, &RunWorker::ranksRead, this, &RunSession::ranksChanged);
  connect(worker_, &RunWorker::stepsRead, batcher_, &StepBatcher::addAll);
  connect(worker_, &RunWorker::evalReceived, this, &RunSession::evalReceived);
  connect(worker_, &RunWorker::eventReceived, this, &RunSession::eventReceived);
  connect(worker_, &RunWorker::serverLoadReceived, this, &RunSession::serverLoadReceived);
  connect(worker_, &RunWorker::outputLine, this, &RunSession::outputLine);
  connect(worker_, &RunWorker::summaryReady, this, &RunSession::summaryReady);
  connect(worker_, &RunWorker::ended, this, &RunSession::onWorkerEnded);
  connect(thread_, &QThread::started, worker_, &RunWorker::run);
  thread_->start();
  return true;
}

void RunSession::stop() {
  if (worker_) requestStopOf(worker_->launcherPid());
}

bool RunSession::injectFault(int rank, const QString& action) {
  if (!worker_ || !thread_) return false;
  return sendRankFault(worker_->launcherPid(), rank, action.toStdString());
}

void RunSession::onWorkerEnded(const RunOutcome& outcome) {
  batcher_->flush();  // every step is drawn before the end is announced
  joinThread();       // run() has returned; the thread only has to leave its event loop
  emit ended(outcome);
}

void RunSession::joinThread() {
  if (!thread_) return;
  thread_->quit();
  thread_->wait();
  delete worker_;
  delete thread_;
  worker_ = nullptr;
  thread_ = nullptr;
}

}  // namespace ranklab
