// The moments where ranks meet: each step seen as its start, the rank's arrival at the
// step's collective (its compute done), the collective's end and the step's end, on one
// clock for all ranks; and each collective as every rank's arrival and the end. The run
// analyses (run_analysis.h) are sums over these.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "storage/analysis/analysis_results.h"
#include "storage/run_store.h"

namespace ranklab {

// One rank's step, in ns on the run's shared clock once aligned.
struct StepPoint {
  int rank = 0;
  int64_t step = 0;
  int64_t start = 0;    // the step's first phase began
  int64_t arrival = 0;  // compute done: reached the step's collective
  int64_t exit = 0;     // the collective over (left the barrier, bytes moved)
  int64_t end = 0;      // the update done
  int64_t data = 0, forward = 0, backward = 0, compress = 0, wait = 0, comm = 0, hidden = 0,
          update = 0, bytes_tx = 0;
  bool pipelined = false;   // a pipeline stage's step (micro-batches stashed)
  int64_t collectives = 0;  // all-reduces, reduce-scatters and all-gathers it took part in
};

// Every step row of the run as a point, streamed (a run of a million rows fits).
std::vector<StepPoint> stepPoints(RunStore& store, int64_t run_id);

// A ranklab run's ranks count time from their own start: shift each onto the lowest rank's
// clock by the median difference of their barrier exits (every rank leaves a step's
// all-reduce at the same moment). An imported run's steps are aligned already.
void alignAtBarrierExits(std::vector<StepPoint>& points);

// Why the per-step collective model does not fit this run ("" when it does).
std::string syncModelRefusal(const RunRow& run, const std::vector<StepPoint>& points);

// One collective: each rank's arrival, and its end (the last rank's).
struct SyncInstance {
  std::string kind;
  double bus_bytes = 0;
  std::vector<std::pair<int, int64_t>> arrivals;  // rank, arrival
  int64_t end = 0;
  int64_t lastArrival() const;
  int lastRank() const;
  int64_t transferNs() const;  // from the last arrival to the end
};

// An imported run's collectives: its collective spans, the k-th of every rank (part k)
// one collective.
std::vector<SyncInstance> collectivesFromSpans(const std::vector<SpanRow>& spans, int world);

// A ranklab run's: each step's collective, named `kind`.
std::vector<SyncInstance> collectivesFromSteps(const std::vector<StepPoint>& points,
                                               const std::string& kind);

// Steps by number, each with every rank's point; only the steps every rank recorded.
std::map<int64_t, std::vector<const StepPoint*>> completeSteps(
    const std::vector<StepPoint>& points);

}  // namespace ranklab
