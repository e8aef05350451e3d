// `ranklab calibrate`: measuring on this machine what the simulator needs for a job and a
// calibration lacks — its parts' layers at its micro-batch and threads (engine/sim/part_timing.h),
// its optimizer's update, a batch's copy, and each all-reduce it runs (its data group's
// algorithm, the ring its slices, stages and small sums use) at its groups' sizes, through
// `ranklab bench allreduce`'s own launcher. Stored per machine and reused.
#pragma once

#include <functional>
#include <string>

#include "engine/job/job_spec.h"
#include "engine/sim/calibration.h"
#include "launch/bench_runner.h"

namespace ranklab {

struct CalibrateOptions {
  BenchLaunch bench;                                 // worker, mpirun, a stop flag
  std::function<void(const std::string&)> progress;  // one line per thing measured
};

// $XDG_DATA_HOME/ranklab/calibration/<host>.json (else ~/.local/share/...).
std::string defaultCalibrationPath();
// An empty calibration of this machine (its name, CPU and cores).
Calibration thisMachine();
// The file's calibration; this machine's empty one when `path` does not exist. Throws
// std::runtime_error naming the file and the cause otherwise.
Calibration loadCalibration(const std::string& path);
// Written whole (a part file renamed over it), mode 0600, its folder made private.
void saveCalibration(const std::string& path, const Calibration& calibration);

// What `job` needs that `have` lacks, in words ("fc0 at 64 rows", "ring on 4 ranks"); empty
// when the simulator can predict it from measurements alone.
std::vector<std::string> missingFor(const JobSpec& job, const Calibration& have);
// Measures what missingFor names (everything with `everything`) into `have`.
void calibrateFor(const JobSpec& job, Calibration& have, const CalibrateOptions& options,
                  bool everything = false);

// A step's fixed cost on hosts of as many ranks as the job puts on one: a real data-parallel
// run of the job's model there, its step period less the simulated one's (stored under
// stepOverheadKey).
void measureStepOverhead(const JobSpec& job, Calibration& have, const CalibrateOptions& options);

}  // namespace ranklab
