// A stored run as Chrome Trace Event JSON (Perfetto, chrome://tracing): one process per
// rank, a compute and a communication thread in each, every step's phases as complete
// ("X") events, spans on a thread of their own, events as instants, loss as a counter; a
// sampled step's ring hops on a fourth thread, each joined to its receiver's by a flow arrow,
// and its work on the device (layer by layer, device_trace.h) on a fifth.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <set>
#include <string>

#include "storage/run_store.h"

namespace ranklab {

// Thread ids inside a rank's process.
enum TraceThread {
  kComputeThread = 1,
  kCommThread = 2,
  kSpanThread = 3,
  kPieceThread = 4,
  kDeviceThread = 5
};

// The part of a run a trace holds: a thousand ranks' 2,000 steps are 14 million events (2
// GB of JSON), more than a browser's viewer opens; a window of steps and ranks is not.
struct TraceWindow {
  int64_t first_step = std::numeric_limits<int64_t>::min();
  int64_t last_step = std::numeric_limits<int64_t>::max();
  std::set<int> ranks;  // empty: every rank
  bool whole() const;
  bool hasStep(int64_t step) const { return step >= first_step && step <= last_step; }
  bool hasRank(int rank) const { return ranks.empty() || ranks.count(rank) > 0; }
};

// Writes the trace of `run_id` (throws naming the store if there is no such run); returns
// the number of trace events written.
int64_t writeChromeTrace(RunStore& store, int64_t run_id, std::ostream& out,
                         const TraceWindow& window = {});

// The same, to `path`, whole or not at all (see storage/atomic_file.h).
int64_t exportChromeTrace(RunStore& store, int64_t run_id, const std::string& path,
                          const TraceWindow& window = {});

}  // namespace ranklab
