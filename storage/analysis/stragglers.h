// Who arrived last at each collective, what that cost the others, and whether it is always
// the same rank lately (chronic) or a different one each time (moving).
#pragma once

#include <vector>

#include "storage/analysis/analysis_results.h"
#include "storage/analysis/sync_points.h"

namespace ranklab {

// Every rank of `ranks`, worst first (the most waiting caused); `instances` in run order.
// `rule` receives the window and threshold that named the chronic ones.
std::vector<StragglerStats> stragglersOf(const std::vector<SyncInstance>& instances,
                                         const std::vector<RankBreakdown>& ranks,
                                         ChronicRule& rule);

}  // namespace ranklab
