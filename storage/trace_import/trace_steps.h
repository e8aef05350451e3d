// From the events of every rank's PyTorch trace to ranklab's rows: clocks lined up at the
// collectives' ends, each ProfilerStep cut into the step record's phases, each collective a
// span with its waiting told apart from its transfer (from every rank's arrival at it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/records.h"
#include "storage/run_store.h"
#include "storage/trace_import/pytorch_trace.h"

namespace ranklab {

// How the ranks' clocks were lined up.
struct ClockAlignment {
  std::vector<int64_t> offset_ns;  // added to each rank's times
  int collectives = 0;             // matched collectives the offsets come from (0: none)
  int64_t spread_ns = 0;           // after the shift, the widest spread of a collective's ends
};

// Each trace's shift onto rank 0's clock: the median over matched collectives (the k-th of
// each rank, of the best source every trace has) of the difference of their ends, since a
// collective ends on every rank at about the same moment. Ranks in `traces` order.
ClockAlignment alignClocks(const std::vector<RankTrace>& traces);

// What traceRows made, counted.
struct ImportedCounts {
  int64_t collectives = 0;
  int64_t collectives_with_bytes = 0;
  int64_t device_pieces = 0;
  int64_t kept_other = 0;  // events outside every step, kept as "other:<name>" spans
};

// Every rank's step rows and spans (collectives, device pieces, and what maps to no step),
// handed to `sink` one at a time as they are made (never all held), rank r of `traces` as
// rank ranks[r]; times in ns from the earliest event of any rank after alignment. Each
// event is looked at a bounded number of times, however the steps overlap or the starts tie.
ImportedCounts traceRows(const std::vector<RankTrace>& traces, const std::vector<int>& ranks,
                         const ClockAlignment& clocks, RunRowSink& sink);

// Where a trace's chosen collectives carry no size but its record_param_comms events do (a
// gloo trace: the worker thread's op has no args), each borrows the size of the
// record_param_comms of the same op and number.
void lendSizes(std::vector<RankTrace>& traces);

// The best collective source every trace has (the one the rows and the alignment use).
CollectiveSource commonCollectiveSource(const std::vector<RankTrace>& traces);

}  // namespace ranklab
