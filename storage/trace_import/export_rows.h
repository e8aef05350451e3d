// ranklab's own trace export (storage/chrome_trace.h) read back as the run it was made from:
// its run's fields (the export's "otherData"), each rank's name, every step's phases, bytes,
// loss and samples, its spans, pieces and device pieces. The memory ledger and the
// collective counts are not in an export and come back as 0.
#pragma once

#include <vector>

#include "storage/records.h"
#include "storage/trace_import/pytorch_trace.h"

namespace ranklab {

struct ExportedRun {
  NewRun run;  // origin "ranklab-trace"
  std::vector<RankRow> ranks;
  std::vector<StepRow> steps;
  std::vector<SpanRow> spans;
};

// Throws naming the file when a step's phases cannot be placed.
ExportedRun exportedRun(const RankTrace& trace);

}  // namespace ranklab
