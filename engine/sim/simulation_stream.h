// A simulation one step at a time for every rank: the job's step model (step_actions.h)
// replayed (step_replay.h) with its faults, each step's records made as a real rank's would
// be. `ranklab simulate` stores them; a live simulation sends them as its ranks' telemetry.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/job/job_spec.h"
#include "engine/sim/calibration.h"
#include "storage/run_store.h"

namespace ranklab {

// Steps per epoch of `job` (samples per replica / batch), as the trainer counts them.
int64_t stepsPerEpoch(const JobSpec& job);

class SimulationStream {
 public:
  // Throws std::invalid_argument naming what is not modelled or not calibrated.
  SimulationStream(const JobSpec& job, const Calibration& calibration);
  ~SimulationStream();
  SimulationStream(const SimulationStream&) = delete;
  SimulationStream& operator=(const SimulationStream&) = delete;

  int ranks() const;
  // Replays the next step; with `spans`, a sampled step (telemetry.span_every) records its
  // pipeline passes as spans.
  void next(bool spans);
  int64_t step() const { return step_; }  // the step last replayed (0 before the first)
  const StepRow& row(int rank) const { return rows_[static_cast<size_t>(rank)]; }
  const std::vector<SpanRow>& spans(int rank) const { return spans_[static_cast<size_t>(rank)]; }
  int64_t bubbleNs(int rank) const;  // of the last step's wait: a pipeline's receives
  bool sampled() const;              // the last step is one telemetry.span_every samples
  // A fault (kill, exit, a stop without end) ends the run after the last step.
  bool endsHere() const;
  double clockNs(int rank) const { return clock_[static_cast<size_t>(rank)]; }
  const std::vector<std::string>& notes() const;

 private:
  struct Model;
  JobSpec job_;
  Calibration calibration_;
  std::unique_ptr<Model> model_;
  int64_t step_ = 0;
  int64_t per_epoch_ = 1;
  std::vector<double> clock_, extra_;
  std::vector<StepRow> rows_;
  std::vector<std::vector<SpanRow>> spans_;
};

}  // namespace ranklab
