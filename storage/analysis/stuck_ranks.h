// Who held up a run that did not end `done`: each rank's last completed step, the
// collectives it completed and what it was last seen doing, and the ranks behind the others
// (docs/analysis.md, Hang).
#pragma once

#include <optional>
#include <vector>

#include "storage/analysis/analysis_results.h"
#include "storage/analysis/sync_points.h"
#include "storage/records.h"

namespace ranklab {

// What the store holds of a run; the points on each rank's own clock, as its spans are.
struct StoredRun {
  const RunRow& run;
  const std::vector<StepPoint>& points;
  const std::vector<SpanRow>& spans;
  const std::vector<EventRow>& events;
  const std::vector<RankRow>& ranks;
};

// std::nullopt for a run that ended `done`. One pass over each kind of row.
std::optional<HangReport> hangOf(const StoredRun& stored);

}  // namespace ranklab
