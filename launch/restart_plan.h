// Automatic restarts (train.max_restarts): the job each attempt runs, where the attempt
// after a failure resumes (the checkpoint this run wrote last, else where the job itself
// starts), the step rows rolled back, and the events that say so. The launcher owns
// restarts; a rank only saves and restores its state.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "engine/job/job_spec.h"
#include "launch/run_recorder.h"
#include "storage/run_store.h"

namespace ranklab {

class RestartPlan {
 public:
  using Clock = std::chrono::steady_clock;
  // Call as the run is launched: a checkpoint file older than this is not the run's own.
  explicit RestartPlan(const JobSpec& job);

  bool canRestart() const { return restarts_done_ < job_.train.max_restarts; }
  // The job an attempt runs: only the [[faults]] of that attempt, and from the second on,
  // resume_from the point prepareRestart() chose.
  JobSpec jobFor(int attempt) const;

  // After a failed attempt whose failure was found at `found` (on `rank`, -1 when no rank
  // was named): picks the resume point, rolls the store back to it and records a `restart`
  // event. Under train.elastic a named rank's failure shrinks the world by one: the run
  // goes on without it. Throws CheckpointError when the run's checkpoint cannot be read.
  void prepareRestart(RunStore& store, RunRecorder& recorder, int64_t run_id, int rank,
                      Clock::time_point found);
  // While an attempt runs: records `resumed` (the seconds from detection to the first step
  // trained again) once the restarted ranks report their first step.
  void noticeProgress(RunRecorder& recorder);

 private:
  JobSpec job_;
  std::filesystem::file_time_type launched_;
  int restarts_done_ = 0;
  int ranks_;  // parallel.ranks of the next attempt: one replica fewer after each elastic shrink
  std::string resume_from_;  // the checkpoint the next attempt reads, "" = from the start
  int64_t resume_step_ = 0;
  int resume_rank_ = -1;
  std::optional<Clock::time_point> awaiting_since_;  // failure found, no step trained since
  int64_t steps_before_ = 0;                         // recorder.stepsReceived() at the restart
};

}  // namespace ranklab
