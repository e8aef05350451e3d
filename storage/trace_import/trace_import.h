// `ranklab import`: PyTorch profiler traces (one file per rank) stored as a run, with
// origin "pytorch-import", that every view and analysis opens as it opens its own runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "storage/run_store.h"

namespace ranklab {

struct ImportReport {
  int64_t run_id = 0;
  std::vector<std::string> ranks;    // "rank 0: FILE (distributedInfo)" or "(file order)"
  std::vector<std::string> skipped;  // "FILE: why", for a folder's files that did not import
  int64_t steps = 0;                 // step rows, all ranks
  int64_t events = 0;                // timed events read, all ranks
  int64_t ignored = 0;               // metadata, counters, instants, flows
  int64_t collectives = 0;
  int64_t collectives_with_bytes = 0;
  int64_t device_pieces = 0;
  int64_t kept_other = 0;
  std::string clocks;  // how the ranks' clocks were lined up
  std::string collective_source;
};

// The trace files a path names: the file itself, or a folder's *.json files sorted by name.
// Throws naming the path when there is none.
std::vector<std::string> traceFilesAt(const std::string& path);

// Reads every file (a rank each), stores the run (named `name`, or after the first path)
// and returns what was made of them. A file that fails is skipped and listed when others
// import; when none does, or the files are of different runs (two say the same rank, or
// different world sizes), throws naming them and stores nothing.
ImportReport importPytorchTraces(RunStore& store, const std::vector<std::string>& paths,
                                 const std::string& name,
                                 const std::function<void(const std::string&)>& progress = {});

}  // namespace ranklab
