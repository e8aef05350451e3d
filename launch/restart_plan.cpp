#include "launch/restart_plan.h"

#include <algorithm>
#include <cstdio>
#include <system_error>

#include "engine/train/checkpoint.h"

namespace ranklab {

namespace {

// The file's modification time, or nullopt when it cannot be read (missing).
std::optional<std::filesystem::file_time_type> modified(const std::string& path) {
  std::error_code error;
  const auto time = std::filesystem::last_write_time(path, error);
  if (error) return std::nullopt;
  return time;
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", s);
  return text;
}

}  // namespace

RestartPlan::RestartPlan(const JobSpec& job)
    : job_(job),
      launched_(std::filesystem::file_time_type::clock::now()),
      ranks_(job.parallel.ranks),
      resume_from_(job.train.resume_from) {}

JobSpec RestartPlan::jobFor(int attempt) const {
  JobSpec job = job_;
  job.faults.erase(
      std::remove_if(job.faults.begin(), job.faults.end(),
                     [attempt](const InjectedFault& f) { return f.attempt != attempt; }),
      job.faults.end());
  if (attempt > 0) job.train.resume_from = resume_from_;
  job.parallel.ranks = ranks_;
  return job;
}

void RestartPlan::prepareRestart(RunStore& store, RunRecorder& recorder, int64_t run_id, int rank,
                                 Clock::time_point found) {
  ++restarts_done_;
  // The run's own checkpoint when it wrote one (atomically: it is complete or absent), else
  // where the job started: its own resume_from, or step 0.
  const std::string& path = job_.train.checkpoint_path;
  const auto written = path.empty() ? std::nullopt : modified(path);
  if (written && *written >= launched_) resume_from_ = path;
  resume_step_ = resume_from_.empty() ? 0 : readCheckpoint(resume_from_).step;
  resume_rank_ = rank;

  recorder.flush();  // the failed attempt's last rows first, so the roll-back covers them
  const int64_t removed = store.rollBack(run_id, resume_step_);
  // Under train.elastic a named rank that failed is left out: the world goes on without it,
  // or, where ranks split the model, without its replica (every stage and slice needs a rank).
  const int replica = job_.parallel.pipeline * job_.parallel.tensor;
  const bool shrink = job_.train.elastic && rank >= 0 && ranks_ > replica;
  if (shrink) ranks_ -= replica;
  const int first = rank >= 0 ? rank / replica * replica : 0;
  const std::string left_out = replica == 1 ? "rank " + std::to_string(rank)
                                            : "the replica of rank " + std::to_string(rank) +
                                                  " (ranks " + std::to_string(first) + " to " +
                                                  std::to_string(first + replica - 1) + ")";
  recorder.beginAttempt(ranks_);
  const std::string from = resume_from_.empty()
                               ? std::string("from the start")
                               : "from the checkpoint at step " + std::to_string(resume_step_) +
                                     " (" + resume_from_ + ")";
  recorder.launcherEvent("restart",
                         "restart " + std::to_string(restarts_done_) + " of " +
                             std::to_string(job_.train.max_restarts) + ": every rank again " +
                             from + "; " + std::to_string(removed) +
                             " step rows after it rolled back" +
                             (shrink ? "; on " + std::to_string(ranks_) + " ranks, without " +
                                           left_out + " (train.elastic)"
                                     : std::string()),
                         rank, resume_step_, recorder.nowNs());
  recorder.flush();
  awaiting_since_ = found;
  steps_before_ = recorder.stepsReceived();
}

void RestartPlan::noticeProgress(RunRecorder& recorder) {
  if (!awaiting_since_ || recorder.stepsReceived() == steps_before_) return;
  const double waited = std::chrono::duration<double>(Clock::now() - *awaiting_since_).count();
  recorder.launcherEvent("resumed",
                         "restart " + std::to_string(restarts_done_) +
                             ": training resumed at step " + std::to_string(resume_step_ + 1) +
                             ", " + seconds(waited) + " s after the failure was found",
                         resume_rank_, resume_step_, recorder.latestStepEndNs());
  awaiting_since_.reset();
}

}  // namespace ranklab
