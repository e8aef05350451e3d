// Taking over a Slurm run whose launcher is gone: JobRunner::adopt (`ranklab runs attach`,
// the workbench on opening), from the follow record the gone launcher left.
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <stdexcept>

#include "comm/telemetry/collector.h"
#include "engine/job/job_file.h"
#include "engine/job/stored_job.h"
#include "launch/attempt_end.h"
#include "launch/follow_record.h"
#include "launch/job_runner.h"
#include "launch/restart_plan.h"
#include "launch/run_recorder.h"
#include "launch/slurm_queue.h"
#include "storage/run_store.h"

namespace ranklab {

namespace {

// Seconds since an ISO-8601 UTC time of the store ("2026-11-28T16:57:29Z").
double secondsSinceIso(const std::string& iso) {
  std::tm t{};
  if (!strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &t)) return 0;
  return std::difftime(std::time(nullptr), timegm(&t));
}

// Why a run cannot be taken over, or its record.
FollowRecord followRecordOf(const RunRow& run, const std::string& dir) {
  const std::string who = "run " + std::to_string(run.id);
  if (run.scheduler_job.empty())
    throw std::runtime_error(who +
                             " was not submitted to Slurm: only a Slurm job's ranks "
                             "outlive their launcher");
  if (run.status != "lost")
    throw std::runtime_error(who + " is " + run.status +
                             ", not lost: there is nothing to take over (runs attach follows "
                             "a running run)");
  const std::string path = followRecordPath(dir, run.id, run.scheduler_job);
  auto record = readFollowRecord(path);
  if (!record)
    throw std::runtime_error(path + ": missing, so " + who +
                             "'s telemetry cannot be received again (its launcher saw the job "
                             "end, or ran on another machine)");
  return *record;
}

}  // namespace

RunOutcome JobRunner::adopt(int64_t run_id, RunObserver& observer) {
  RunStore store(options_.db_path);
  const auto run = store.run(run_id);
  if (!run)
    throw std::runtime_error(options_.db_path + ": no run with id " + std::to_string(run_id));
  const std::string dir = slurmOutputDir(options_.db_path);
  const FollowRecord record = followRecordOf(*run, dir);
  const JobSpec job = requireStoredJob(*run);
  SlurmJob slurm(record.job_id, dir, "ranklab-" + std::to_string(run_id));
  const SlurmJobState& s = slurm.state();
  if (s.ended()) {  // recorded, and the record goes: nobody will follow this job again
    store.setSchedulerState(run_id, {slurm.id(), s.state, s.reason, s.nodes, s.exit_code});
    std::filesystem::remove(followRecordPath(dir, run_id, record.job_id));
    throw std::runtime_error("Slurm job " + slurm.id() + " already ended (" + s.state +
                             "): nothing to follow; run " + std::to_string(run_id) +
                             " stays lost, with Slurm's end recorded");
  }
  if (!store.adoptRun(run_id))
    throw std::runtime_error("run " + std::to_string(run_id) +
                             " was taken over by another launcher");
  last_run_id_ = run_id;
  stop_requested_ = false;
  RunRecorder recorder(store, run_id, run->world, observer);
  recorder.resume(store.ranks(run_id), record.time_offset_ns);
  recorder.launcherEvent("log", "launcher pid " + std::to_string(getpid()) +
                                    " took over Slurm job " + slurm.id() +
                                    ", whose launcher had gone");
  Collector collector(record.wire_id, run->world, record.endpoint, record.curve);
  for (const RankRow& r : store.ranks(run_id))
    collector.continueFrom(r.rank, r.last_seq, r.seq_gaps);
  RestartPlan restarts(job);
  const AttemptEnd end = watchAttempt(job, slurm, collector, recorder, restarts, observer);
  if (slurm.state().ended()) std::filesystem::remove(followRecordPath(dir, run_id, record.job_id));
  RunOutcome outcome;
  outcome.run_id = run_id;
  outcome.exit_code = end.exit_code;
  settle(outcome, recorder, end);
  recorder.flush();
  store.finishRun(run_id, outcome.status, secondsSinceIso(run->created),
                  recorder.slowestTrainNs() / 1e9);
  if (auto summary = store.summary(run_id)) observer.onFinished(*summary);
  return outcome;
}

}  // namespace ranklab
