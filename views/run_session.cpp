#include "views/run_session.h"

#include <QThread>
#include <exception>

namespace ranklab {

RunWorker::RunWorker(JobRunner* runner, QString job_path, QStringList overrides, QString toml_text)
    : runner_(runner),
      job_path_(std::move(job_path)),
      overrides_(std::move(overrides)),
      toml_text_(std::move(toml_text)) {}

void RunWorker::run() {
  RunOutcome outcome;
  try {
    std::vector<std::string> overrides;
    for (const QString& o : overrides_) overrides.push_back(o.toStdString());
    outcome =
        runner_->runJobText(toml_text_.toStdString(), job_path_.toStdString(), overrides, *this);
  } catch (const std::exception& e) {
    outcome.status = "failed";
    outcome.error = e.what();
  }
  emit ended(outcome);
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
  if (runner_) runner_->requestStop();
  joinThread();
}

bool RunSession::start(const QString& job_path, const QStringList& overrides) {
  if (isRunning()) return false;
  runner_ = std::make_unique<JobRunner>(options_);
  return startWorker(new RunWorker(runner_.get(), job_path, overrides));
}

bool RunSession::startText(const QString& toml_text, const QString& job_path) {
  if (isRunning()) return false;
  runner_ = std::make_unique<JobRunner>(options_);
  return startWorker(new RunWorker(runner_.get(), job_path, {}, toml_text));
}

bool RunSession::startWorker(RunWorker* worker) {
  worker_ = worker;
  thread_ = new QThread(this);
  thread_->setObjectName(QStringLiteral("ranklab-run"));
  worker_->moveToThread(thread_);

  // The worker lives on thread_, this on the UI thread: these connections are queued.
  connect(worker_, &RunWorker::started, this, &RunSession::started);
  connect(worker_, &RunWorker::rankChanged, this, &RunSession::rankChanged);
  connect(worker_, &RunWorker::stepReceived, batcher_, &StepBatcher::add);
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
  if (runner_) runner_->requestStop();
}

bool RunSession::injectFault(int rank, const QString& action) {
  if (!runner_ || !thread_) return false;
  runner_->requestFault(rank, action.toStdString());
  return true;
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
  runner_.reset();
}

}  // namespace ranklab
