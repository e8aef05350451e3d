// Each rank's totals over a run's steps (what RunStore::summary reports per rank): summed
// over the steps while the run goes on, and once more into rank_totals when it ends, so
// that a run of 1,024 ranks x 2,000 steps is not summed again for each runs list or compare.
#pragma once

#include <string>

namespace ranklab::rank_totals {

// One row per rank, ranks that said hello but never finished a step with zeros; bound to
// the run's id. `stored`: read from rank_totals, else summed over the steps.
std::string selectSql(bool stored);
// Replaces the run's rows in rank_totals (bound to the run's id).
std::string insertSql();
constexpr const char* kClear = "DELETE FROM rank_totals WHERE run_id = ?";
constexpr const char* kHasTotals = "SELECT 1 FROM rank_totals WHERE run_id = ? LIMIT 1";

}  // namespace ranklab::rank_totals
