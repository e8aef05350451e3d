// Runs one job at a time in a launcher process of its own (`ranklab run`, started detached),
// so the run outlives the workbench, and follows it from the run store on a thread of its
// own (RunFollower): the same records whether the run was launched here, by an earlier
// workbench, or from a terminal. Every record comes back to the UI thread as a queued signal.
#pragma once

#include <QObject>
#include <QStringList>
#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "launch/job_runner.h"
#include "launch/run_follower.h"
#include "views/models/record_metatypes.h"
#include "views/models/step_batcher.h"

Q_DECLARE_METATYPE(ranklab::RunOutcome)

class QThread;

namespace ranklab {

// Lives on the follow thread: polls the follower and turns its callbacks into signals.
class RunWorker : public QObject, public RunObserver {
  Q_OBJECT

 public:
  // make_follower runs on the follow thread (it may start the launcher); a throw is a failed
  // outcome. on_started renames what the launch left under a temporary name.
  using FollowerMaker = std::function<std::unique_ptr<RunFollower>()>;
  explicit RunWorker(FollowerMaker make_follower);

  void run();                      // on the follow thread; emits ended() last, unless left
  void leave() { leave_ = true; }  // stop following; the run goes on
  int64_t launcherPid() const { return launcher_pid_; }
  // On the follow thread, from a slot connected directly to started().
  void setConsolePath(const std::string& path) {
    if (follower_) follower_->setConsolePath(path);
  }

 signals:
  void started(qint64 run_id, const QStringList& command);
  // A poll's changed ranks as one signal: a thousand ranks' hellos or byes, one model update.
  void ranksRead(const std::vector<ranklab::RankRow>& ranks);
  void stepsRead(const std::vector<ranklab::StepRow>& steps);
  void evalReceived(const ranklab::EvalRow& eval);
  void eventReceived(const ranklab::EventRow& event);
  void serverLoadReceived(const ranklab::ServerLoadRow& load);
  void outputLine(int rank, bool is_stderr, const QString& line);
  void summaryReady(const ranklab::RunSummary& summary);
  void ended(const ranklab::RunOutcome& outcome);

 private:
  void onStarted(int64_t run_id, const std::vector<std::string>& command) override;
  void onRank(const RankRow& rank) override { ranks_.push_back(rank); }
  void onStep(const StepRow& step) override { steps_.push_back(step); }
  void onEval(const EvalRow& eval) override { emit evalReceived(eval); }
  void onEvent(const EventRow& event) override { emit eventReceived(event); }
  void onServerLoad(const ServerLoadRow& load) override { emit serverLoadReceived(load); }
  void onOutput(int rank, bool is_stderr, const std::string& line) override;
  void onFinished(const RunSummary& summary) override { emit summaryReady(summary); }
  void emitPoll();  // what the poll read, in as few signals as it can

  FollowerMaker make_follower_;
  std::unique_ptr<RunFollower> follower_;
  std::vector<StepRow> steps_;  // read in this poll, sent as one signal
  std::vector<RankRow> ranks_;  // changed in this poll, sent as one signal
  std::atomic<bool> leave_{false};
  std::atomic<int64_t> launcher_pid_{0};
};

// Owned by the UI: launches a run or follows one already going, stops it, injects faults,
// and forwards the worker's signals.
class RunSession : public QObject {
  Q_OBJECT

 public:
  explicit RunSession(LaunchOptions options, QObject* parent = nullptr);
  ~RunSession() override;  // stops following; the run itself goes on

  bool isRunning() const { return thread_ != nullptr; }
  // false when a run is already followed. Job file errors arrive as ended() with status
  // "failed" and the launcher's words.
  bool start(const QString& job_path, const QStringList& overrides = {});
  // The job as text (the setup page's form); job_path is where it came from, "" if unsaved.
  bool startText(const QString& toml_text, const QString& job_path);
  // The job simulated live instead (`ranklab simulate --live`: its ranks' records sent
  // through the collector at simulate.rate), followed as a run.
  bool simulateText(const QString& toml_text, const QString& job_path);
  // Continues stored run `run_id` from its checkpoint as a new run on `ranks` ranks
  // (`ranklab resume`; elastic when the number differs). Its refusal (no checkpoint, a job
  // that cannot resize) arrives as ended() with status "failed" and the launcher's words.
  bool resume(qint64 run_id, int ranks);
  // Follows a stored run that is still going (launched by an earlier workbench or the CLI),
  // from its first step; false when a run is already followed.
  bool attach(qint64 run_id);
  // Takes over a Slurm run whose launcher is gone (`ranklab runs attach ID`, detached) and
  // follows it as a launched run.
  bool takeOver(qint64 run_id);
  // The same without following it (another run is followed): its launcher goes on alone.
  // Returns why it could not start ("" when it did).
  QString takeOverUnfollowed(qint64 run_id);
  void setDbPath(const QString& path) { options_.db_path = path.toStdString(); }
  void stop();  // asks the launcher to stop the run (as Ctrl-C); returns at once, ended() follows
  // kill, stop or continue a rank of the followed run (sent to its launcher); false when no
  // run is followed or its launcher is gone.
  bool injectFault(int rank, const QString& action);

 signals:
  void started(qint64 run_id, const QStringList& command);
  void ranksChanged(const std::vector<ranklab::RankRow>& ranks);  // as read in one poll
  // Steps come in batches (StepBatcher): one model update per batch.
  void stepsReceived(const std::vector<ranklab::StepRow>& steps);
  void evalReceived(const ranklab::EvalRow& eval);
  void eventReceived(const ranklab::EventRow& event);
  void serverLoadReceived(const ranklab::ServerLoadRow& load);  // a shard's last interval
  void outputLine(int rank, bool is_stderr, const QString& line);
  void summaryReady(const ranklab::RunSummary& summary);
  void ended(const ranklab::RunOutcome& outcome);  // the thread is gone by now

 private:
  bool launch(const std::vector<std::string>& command, const QStringList& overrides,
              const QString& toml_text);
  bool startWorker(RunWorker* worker);
  void onWorkerEnded(const RunOutcome& outcome);
  void joinThread();

  LaunchOptions options_;
  QThread* thread_ = nullptr;
  RunWorker* worker_ = nullptr;
  StepBatcher* batcher_;
};

}  // namespace ranklab
