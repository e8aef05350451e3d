// Turns telemetry envelopes into store rows: forwards each to the observer at once and
// writes them to the run store in batches (one transaction per flush).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "comm/telemetry/telemetry.pb.h"
#include "launch/run_observer.h"
#include "storage/run_store.h"

namespace ranklab {

class RunRecorder {
 public:
  RunRecorder(RunStore& store, int64_t run_id, int world, RunObserver& observer);

  void ingest(const telemetry::Envelope& envelope);
  // Records a launcher-side event, e.g. a rejected message or mpirun's failure: rank -1, or
  // the rank (and step) it is about, such as the rank found dead.
  // `time_ns` places it on the run's time line (0: at its step's end).
  void launcherEvent(const std::string& kind, const std::string& text, int rank = -1,
                     int64_t step = 0, int64_t time_ns = 0);
  // On the run's time line: when `rank`'s last step ended, the latest step end of any rank,
  // and now (the launcher's clock, which a restart's ranks continue from).
  int64_t lastStepEndNs(int rank) const { return last_step_end_ns_.at(static_cast<size_t>(rank)); }
  int64_t latestStepEndNs() const;
  int64_t nowNs() const;
  // A restart: every rank below `world` starts again (Hello, steps from the checkpoint on,
  // Bye); ranks from `world` on have left the run (an elastic shrink). The ranks' training
  // time so far is kept and the next attempt's is added to it.
  void beginAttempt(int world);
  // A run taken over from a launcher that is gone: its ranks' rows as stored (their hosts,
  // pids, status) and the time line's offset that launcher gave its attempt.
  void resume(const std::vector<RankRow>& ranks, int64_t time_offset_ns);
  int64_t timeOffsetNs() const { return time_offset_ns_; }
  // Writes when the batch is big or old enough; flush() writes now.
  void flushIfDue();
  void flush();
  // Where the run's batch job is in its scheduler's queue, onto the run's row at once.
  void setSchedulerState(const SchedulerRecord& record) {
    store_.setSchedulerState(run_id_, record);
  }
  // Updates a rank's count of telemetry messages lost in transit.
  void setGaps(int rank, int64_t gaps);

  bool allRanksSaidBye() const;
  bool allRanksReported() const;  // every rank has sent something (MPI start-up is over)
  // Ranks that have not said Bye (not finished, or never started).
  std::vector<int> ranksWithoutBye() const;
  std::vector<int> ranksNeverHeard() const;  // no message at all from these yet
  bool anyRankFailed() const;
  // Max over ranks of the training-loop time; for a rank that never said Bye (stopped,
  // crashed), the span of its step telemetry stands in.
  int64_t slowestTrainNs() const;
  int64_t stepsReceived() const { return steps_received_; }

 private:
  RankRow& rankRow(int rank) { return ranks_.at(static_cast<size_t>(rank)); }
  void touchRank(int rank);
  void onStep(int rank, int64_t time_ns, const telemetry::Step& step);
  int64_t trainNsThisAttempt(size_t rank) const;
  // A rank's time (ns since it started) on the run's time line, which restarts continue.
  int64_t shifted(int64_t rank_ns) const { return rank_ns + time_offset_ns_; }

  RunStore& store_;
  int64_t run_id_;
  RunObserver& observer_;
  std::vector<RankRow> ranks_;
  std::vector<bool> rank_dirty_;
  std::vector<bool> said_bye_;
  std::vector<int64_t> first_step_start_ns_;  // per rank, -1 before its first step
  std::vector<int64_t> last_step_end_ns_;
  std::vector<int64_t> earlier_train_ns_;  // per rank, over the attempts before this one
  RecordBatch batch_;
  std::chrono::steady_clock::time_point last_flush_ = std::chrono::steady_clock::now();
  int64_t steps_received_ = 0;
  const std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
  int64_t time_offset_ns_ = 0;  // added to the ranks' times from the first restart on
};

}  // namespace ranklab
