// What `ranklab analyze` computes from a stored run, its own or imported: where each rank's
// time went, how much communication hid behind compute, each collective's waiting against
// its transfer, who arrived last and what that cost the others, and the chain of pieces
// across ranks that set each step's length. docs/analysis.md defines each figure.
#pragma once

#include <cstdint>

#include "storage/analysis/analysis_results.h"
#include "storage/run_store.h"

namespace ranklab {

// Throws naming the store when there is no such run.
RunAnalysis analyzeRun(RunStore& store, int64_t run_id);

}  // namespace ranklab
