// ranklab's own trace export (storage/chrome_trace.h) read back as the run it was made from:
// its run's fields (the export's "otherData"), each rank's name, every step's phases, bytes,
// loss and samples, its spans, pieces and device pieces. The memory ledger and the
// collective counts are not in an export and come back as 0.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "storage/records.h"

namespace ranklab {

// An event of an export as the reader hands it over, once, to ExportRows.
struct ExportEvent {
  char ph = 'X';  // X (a phase, span or piece), C (the loss), M (a rank's name), i, s, f
  int pid = 0, tid = 0;
  std::string name, cat;
  int64_t start_ns = 0, dur_ns = 0;
  std::map<std::string, double> args;  // its numbers
  std::string text;                    // args.name: a metadata event's ("rank 0 (host)")
};

struct ExportedRun {
  NewRun run;  // origin "ranklab-trace"
  std::vector<RankRow> ranks;
  std::vector<StepRow> steps;
  std::vector<SpanRow> spans;
};

// The rows an export's events make, built one event at a time: an event that makes no row
// (an instant, a flow, an empty object) is counted and dropped, so memory follows the rows.
class ExportRows {
 public:
  // False for an event that makes no row.
  bool add(const ExportEvent& e);
  int64_t events() const { return events_; }
  // Its rows, moved out: ranks, steps (with their losses) and spans.
  void moveInto(ExportedRun& out);

 private:
  int64_t events_ = 0;
  std::vector<RankRow> ranks_;
  std::map<std::pair<int, int64_t>, StepRow> steps_;  // rank, step
  std::map<std::pair<int, int64_t>, double> losses_;  // rank, time
  std::vector<SpanRow> spans_;
};

// The run of an export at `path` with its "otherData" fields; the rows moved out of `rows`.
ExportedRun exportedRun(const std::string& path,
                        const std::map<std::string, std::string>& other_data, ExportRows& rows);

}  // namespace ranklab
