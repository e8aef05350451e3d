#include "launch/slurm_queue.h"

#include "launch/follow_record.h"
#include "storage/private_files.h"

namespace ranklab {

std::string slurmOutputDir(const std::string& db_path) {
  const std::string dir = slurmFolderOf(db_path);
  // Slurm writes the ranks' output there as this account: only its own folder, never a link.
  ensurePrivateFolder(dir, "the Slurm output folder");
  return dir;
}

namespace {

// "job 12 PENDING (Resources)", "job 12 RUNNING on n1", "job 12 COMPLETED, exit 0:0".
std::string queueText(const std::string& id, const SlurmJobState& s) {
  return "job " + id + " " + s.state + (s.reason.empty() ? "" : " (" + s.reason + ")") +
         (s.nodes.empty() ? "" : " on " + s.nodes) +
         (s.exit_code.empty() ? "" : ", exit " + s.exit_code);
}

}  // namespace

void QueueFollower::operator()(Clock::time_point& last_heard, RankWatch& watch) {
  if (!job) return;
  job->poll();
  if (job->takeChange()) {
    const SlurmJobState& s = job->state();
    recorder.setSchedulerState({job->id(), s.state, s.reason, s.nodes, s.exit_code});
    recorder.launcherEvent("queue", queueText(job->id(), s));
  }
  if (!job->state().started()) {
    last_heard = Clock::now();
    watch.notStartedBefore(Clock::now());
  }
}

bool QueueFollower::givesUp(const std::optional<Clock::time_point>& stop_sent, bool all_bye) {
  if (!job) return false;
  if (all_bye && !all_bye_since) all_bye_since = Clock::now();
  const auto since = stop_sent ? stop_sent : all_bye_since;
  return since && Clock::now() - *since > kUnconfirmedLimit;
}

void QueueFollower::settle(AttemptEnd& end) const {
  if (!job) return;
  const SlurmJobState& s = job->state();
  if (!s.ended()) {  // given up waiting: the ranks' own words decide, and this is said
    recorder.launcherEvent("error", "job " + job->id() +
                                        ": Slurm did not confirm its end (its controller "
                                        "does not answer); it may still run: scancel " +
                                        job->id() + " once Slurm answers");
    if (recorder.allRanksSaidBye()) end.exit_code = 0;
    return;
  }
  // Ranks that died of someone's scancel are not a failure: the job was stopped.
  if (slurmCancelled(s) && !job->cancelledHere()) {
    end.stopped = true;
    end.failure.reset();
    end.failure_text.clear();
    recorder.launcherEvent("queue", "job " + job->id() + " was " + slurmEndCause(s) +
                                        ", not by ranklab: the run is stopped");
  } else if (!slurmCancelled(s) && s.state != "COMPLETED") {
    end.failure_text = "job " + job->id() + ": " + slurmEndCause(s) +
                       (end.failure_text.empty() ? "" : "; " + end.failure_text);
  }
}

}  // namespace ranklab
