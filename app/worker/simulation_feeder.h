// A live simulation's process (ranklab simulate --live): every rank's steps replayed from the
// calibration (engine/sim/simulation_stream.h), and this process's share of the ranks sent
// as those ranks' own telemetry (a Reporter each, the run's CURVE keys), at the job's pace,
// so the collector, the recorder, the store and the workbench take the load a real job of
// that many ranks gives them.
#pragma once

#include <string>

#include "engine/job/job_spec.h"

namespace ranklab {

struct FeederOptions {
  std::string calibration_path;  // the calibration the CLI resolved
  double rate = 0;               // steps per second per rank; 0: the simulated pace
  int64_t steps = 0;             // 0: the job's epochs' steps
  std::string endpoint, run_id;  // the collector, as a rank's
  int process = 0, processes = 1;
};

// Sends ranks [process * ranks / processes, (process + 1) * ranks / processes). A [[faults]]
// stop without end, a kill or an exit at step S: every rank sends no step after S, as a real
// job would block in its next collective; the faulted rank also stops its heartbeats (a
// stopped process's), the others beat on until the launcher ends the run. Returns 0.
int runSimulationFeeder(const JobSpec& job, const FeederOptions& options);

// `ranklab-worker --simulate-live`'s flags after the usual ones: true when they name a feeder.
bool parseFeederFlag(const std::string& flag, const std::string& value, FeederOptions& options);

}  // namespace ranklab
