// Runs one job at a time on its own thread; JobRunner::run blocks there, never on the UI.
// Every RunObserver callback comes back to the UI thread as a queued, typed signal.
#pragma once

#include <QObject>
#include <QStringList>
#include <memory>
#include <vector>

#include "launch/job_runner.h"
#include "views/models/record_metatypes.h"
#include "views/models/step_batcher.h"

Q_DECLARE_METATYPE(ranklab::RunOutcome)

class QThread;

namespace ranklab {

// Lives on the run thread: turns observer callbacks into signals.
class RunWorker : public QObject, public RunObserver {
  Q_OBJECT

 public:
  // With toml_text empty the job is read from job_path; else job_path only names it.
  RunWorker(JobRunner* runner, QString job_path, QStringList overrides, QString toml_text = {});

  void run();  // on the run thread; emits ended() last

 signals:
  void started(qint64 run_id, const QStringList& command);
  void rankChanged(const ranklab::RankRow& rank);
  void stepReceived(const ranklab::StepRow& step);
  void evalReceived(const ranklab::EvalRow& eval);
  void eventReceived(const ranklab::EventRow& event);
  void serverLoadReceived(const ranklab::ServerLoadRow& load);
  void outputLine(int rank, bool is_stderr, const QString& line);
  void summaryReady(const ranklab::RunSummary& summary);
  void ended(const ranklab::RunOutcome& outcome);

 private:
  void onStarted(int64_t run_id, const std::vector<std::string>& command) override;
  void onRank(const RankRow& rank) override { emit rankChanged(rank); }
  void onStep(const StepRow& step) override { emit stepReceived(step); }
  void onEval(const EvalRow& eval) override { emit evalReceived(eval); }
  void onEvent(const EventRow& event) override { emit eventReceived(event); }
  void onServerLoad(const ServerLoadRow& load) override { emit serverLoadReceived(load); }
  void onOutput(int rank, bool is_stderr, const std::string& line) override;
  void onFinished(const RunSummary& summary) override { emit summaryReady(summary); }

  JobRunner* runner_;
  QString job_path_;
  QStringList overrides_;
  QString toml_text_;
};

// Owned by the UI: starts a run, stops it, and forwards the worker's signals.
class RunSession : public QObject {
  Q_OBJECT

 public:
  explicit RunSession(LaunchOptions options, QObject* parent = nullptr);
  ~RunSession() override;  // asks a live run to stop and waits for it

  bool isRunning() const { return thread_ != nullptr; }
  // false when a run is already going. Job file errors arrive as ended() with status "failed".
  bool start(const QString& job_path, const QStringList& overrides = {});
  // The job as text (the setup page's form); job_path is where it came from, "" if unsaved.
  bool startText(const QString& toml_text, const QString& job_path);
  void setDbPath(const QString& path) { options_.db_path = path.toStdString(); }
  void stop();  // returns at once; ended() follows
  // kill, stop or continue a rank of the running run (JobRunner::requestFault); false when
  // no run is going.
  bool injectFault(int rank, const QString& action);

 signals:
  void started(qint64 run_id, const QStringList& command);
  void rankChanged(const ranklab::RankRow& rank);
  // Steps come in batches (StepBatcher): one model update per batch.
  void stepsReceived(const std::vector<ranklab::StepRow>& steps);
  void evalReceived(const ranklab::EvalRow& eval);
  void eventReceived(const ranklab::EventRow& event);
  void serverLoadReceived(const ranklab::ServerLoadRow& load);  // a shard's last interval
  void outputLine(int rank, bool is_stderr, const QString& line);
  void summaryReady(const ranklab::RunSummary& summary);
  void ended(const ranklab::RunOutcome& outcome);  // the thread is gone by now

 private:
  bool startWorker(RunWorker* worker);
  void onWorkerEnded(const RunOutcome& outcome);
  void joinThread();

  LaunchOptions options_;
  std::unique_ptr<JobRunner> runner_;
  QThread* thread_ = nullptr;
  RunWorker* worker_ = nullptr;
  StepBatcher* batcher_;
};

}  // namespace ranklab
