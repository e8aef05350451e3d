// `ranklab plan`: every layout of a job on N ranks that the job's own checks accept (data x
// pipeline x tensor, ZeRO stage, micro-batches, schedule, sequence parallelism), each
// predicted by the simulator (simulator.h) and ranked by predicted time per sample. One model:
// plan has no arithmetic of its own.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/job/job_spec.h"
#include "engine/sim/calibration.h"
#include "engine/sim/simulator.h"

namespace ranklab {

struct PlanCandidate {
  JobSpec job;            // the base job with this layout, resolved
  std::string overrides;  // the --set arguments that make it from the base job
  Prediction prediction;
  double sample_s = 0;     // predicted seconds per training sample (the ranking)
  int64_t peak_bytes = 0;  // the memory estimate's largest rank, process and data included
  bool fits = true;        // peak_bytes within the limit
  std::string dominant;    // "compute", "exposed comm", "bubble" or "wait"
};

// The layouts of `base` on `ranks` ranks that its checks accept (each a parsed, resolved job).
std::vector<PlanCandidate> layoutsOf(const JobSpec& base, int ranks);

// Each candidate predicted and ranked, fastest per sample first; `memory_limit` bytes per
// rank (0: none) marks those over it. A candidate the simulator cannot model (or that the
// calibration cannot cover) is left out, its reason passed to `skipped`.
std::vector<PlanCandidate> planLayouts(const JobSpec& base, int ranks,
                                       const Calibration& calibration, double memory_limit,
                                       const std::function<void(const std::string&)>& skipped);

// What dominates a predicted step.
std::string dominantPart(const Prediction& p);

}  // namespace ranklab
