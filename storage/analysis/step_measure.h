// A run's time per step and memory by the prediction's measure (docs/plan.md), the same on a
// simulated run's rows and a real run's: the slowest rank's median period between
// consecutive step ends (the first few steps aside), its median step per phase, and the
// largest rank's memory ledger. And what a real run's "prediction" event says was predicted
// for it (the simulated run's same measures), read back for the pages that show both.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "storage/run_store.h"

namespace ranklab {

// The slowest rank's median period between consecutive step ends, the first `skip` aside;
// per-rank end times in ns. 0 when no rank has two steps past `skip`.
double stepPeriodSeconds(const std::vector<std::vector<int64_t>>& ends_per_rank, int skip = 3);

struct MeasuredStep {
  double step_s = 0;
  int64_t memory_bytes =
      0;  // the largest rank's params + grads + optimizer + activations + buffers
  std::optional<PhaseTimes>
      phases;  // the slowest rank's median, per phase (ns); none without steps
};

// Takes a run's step rows in any order of ranks, each rank's in step order.
class StepMeasurer {
 public:
  void add(const StepRow& step);
  MeasuredStep result() const;

 private:
  std::map<int, std::vector<int64_t>> ends_;
  std::map<int, std::vector<PhaseTimes>> phases_;
  int64_t memory_ = 0;
};

MeasuredStep measuredStep(const std::vector<StepRow>& steps);
MeasuredStep measuredStep(RunStore& store, int64_t run);

// A "prediction" event's text: {"simulated_run", "step_s", "memory_bytes", "phases": {name:
// s}}, the simulated run's measured step (app/cli/prediction_record.h).
struct PredictedStep {
  int64_t simulated_run = 0;
  double step_s = 0;
  int64_t memory_bytes = 0;
  std::optional<PhaseTimes> phases;  // ns; none when the event lists no phase
};

// The run's latest "prediction" event, read; none when it has none or none that reads.
std::optional<PredictedStep> predictionOf(const std::vector<EventRow>& events);

// (predicted - measured) / measured: + where the prediction was too high; 0 for nothing measured.
double relativeError(double predicted, double measured);

}  // namespace ranklab
