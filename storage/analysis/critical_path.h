// The chain across ranks that set each step's length, for steps that meet at one collective:
// the last rank to arrive, its compute up to there, the collective's transfer, and the
// update of the rank that ended last; and the same had the rank that arrived last most often
// been as fast as the median rank (a what-if).
#pragma once

#include <string>
#include <vector>

#include "storage/analysis/analysis_results.h"
#include "storage/analysis/sync_points.h"

namespace ranklab {

// `collective` names the transfer's piece of the path (e.g. "all_reduce").
CriticalPath criticalPath(const std::vector<StepPoint>& points, const std::string& collective);

}  // namespace ranklab
