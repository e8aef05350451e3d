// A stored run as Chrome Trace Event JSON (Perfetto, chrome://tracing): one process per
// rank, a compute and a communication thread in each, every step's phases as complete
// ("X") events, spans on a thread of their own, events as instants, loss as a counter; a
// sampled step's ring hops on a fourth thread, each joined to its receiver's by a flow arrow,
// and its work on the device (layer by layer, device_trace.h) on a fifth.
#pragma once

#include <cstdint>
#include <ostream>
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

// Writes the trace of `run_id` (throws naming the store if there is no such run); returns
// the number of trace events written.
int64_t writeChromeTrace(RunStore& store, int64_t run_id, std::ostream& out);

// The same, to `path`, whole or not at all (see storage/atomic_file.h).
int64_t exportChromeTrace(RunStore& store, int64_t run_id, const std::string& path);

}  // namespace ranklab
