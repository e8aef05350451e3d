// A run computed instead of trained: the job's layout, its step model (step_actions.h) and
// the calibration's costs replayed step after step (step_replay.h), every rank's records
// written as a real rank's would be (steps, a pipeline's passes as spans on sampled steps,
// the memory ledger from the engine's estimate), with the job's faults shaping it: a
// straggler's delay, a slowed rank, a stopped rank, a killed one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/job/job_spec.h"
#include "engine/sim/calibration.h"
#include "engine/sim/simulation_stream.h"   // stepsPerEpoch
#include "storage/analysis/step_measure.h"  // the simulated and real runs' one measure
#include "storage/run_store.h"

namespace ranklab {

struct SimulationOptions {
  int64_t steps = 0;  // 0: the job's epochs' steps
  uint64_t seed = 1;  // nothing is drawn yet: the same job and calibration give the same run
};

// What a simulation predicts for the job, for plan's table and a run's prediction.
struct Prediction {
  double step_s = 0;         // the slowest rank's median step period
  int64_t memory_bytes = 0;  // the largest rank's ledger (params..buffers)
  PhaseTimes phases{};       // the slowest rank's median step, per phase (ns)
  int64_t bubble_ns = 0;     // of its wait: a pipeline's receives
  double wall_s = 0;         // the last rank's end
  int64_t steps = 0;
  std::string status = "done";     // "failed" where a fault ended it
  std::vector<std::string> notes;  // costs fitted rather than measured
};

// Simulates `job` (resolved) on `calibration`'s machine into `sink` (every row stamped by the
// store); throws std::invalid_argument naming what is not modelled or not calibrated.
Prediction simulateRun(const JobSpec& job, const Calibration& calibration,
                       const SimulationOptions& options, RunRowSink& sink);

// The same prediction without rows (plan's candidates): `steps` steps replayed.
Prediction predictRun(const JobSpec& job, const Calibration& calibration, int64_t steps = 12);

}  // namespace ranklab
