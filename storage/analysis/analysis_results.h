// The figures `ranklab analyze` prints, as plain structs (run_analysis.h computes them;
// docs/analysis.md defines each).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ranklab {

// One rank's time over the analysed steps, in seconds.
struct RankBreakdown {
  int rank = 0;
  int64_t steps = 0;
  double compute_s = 0;  // data loading excluded: forward, backward, compress, update
  double comm_s = 0;     // communication not hidden behind compute
  double wait_s = 0;     // blocked on the last rank to arrive
  double data_s = 0;
  double idle_s = 0;   // from the first step's start to the last's end, outside every step
  double overlap = 0;  // hidden communication / all communication (0 without any)
};

// One kind of collective over the run.
struct CollectiveStats {
  std::string kind;  // all_reduce, all_gather, ...
  int64_t count = 0;
  double transfer_s = 0;  // summed over collectives: from the last arrival to the end
  double wait_s = 0;      // summed over collectives and ranks: arrival to the last arrival
  double bus_bytes = 0;   // nccl-tests' bus bytes (all-reduce: 2(n-1)/n S), 0 unrecorded
  double busbw_gbps = 0;  // bus_bytes / transfer_s, in GB/s as nccl-tests prints it
};

struct StragglerStats {
  int rank = 0;
  int64_t last_arrivals = 0;  // collectives this rank reached last
  double caused_wait_s = 0;   // the others' waiting for it there (rank-seconds)
  double last_share = 0;      // last_arrivals / the collectives compared, 0..1
  double recent_share = 0;    // its share of the last ChronicRule::window collectives
  std::string kind = "none";  // chronic | moving (last at times) | none (never last)
};

// How a chronic straggler (the same rank last most of the time lately) is told from a moving
// one: last in more than `share_above` of the last `window` collectives.
struct ChronicRule {
  int64_t window = 0;      // min(100, the collectives compared)
  double share_above = 0;  // 0.5, or what chance alone reaches among few ranks if more
};

// Where a rank of a run that did not finish got to.
struct RankProgress {
  int rank = 0;
  std::string host;
  int64_t last_step = -1;       // its last completed step; -1: none stored
  int64_t last_collective = 0;  // the collectives it completed, counted from 1; 0: none
  std::string phase;            // what it was last seen doing (a span's kind, a step's phase)
};

// Who held a run up that did not end `done` (docs/analysis.md, Hang).
struct HangReport {
  std::string status;                      // failed | stopped | lost | running
  std::string failure;                     // the launcher's verdict (a rank dead or hung), "" none
  int64_t median_last_step = -1;           // what "behind" is measured against
  std::vector<RankProgress> ranks_behind;  // furthest behind first
};

struct PathShare {
  int rank = -1;  // -1: every rank at once (a collective's transfer)
  std::string phase;
  double share = 0;
};

struct CriticalPath {
  std::vector<PathShare> shares;  // largest first, adding up to 1
  int64_t steps = 0;              // steps every rank recorded
  double path_s = 0;              // the path's length summed over those steps
  double span_s = 0;      // the same steps' span on the clock (first start to last end, per run of
                          // consecutive steps): what the path must add up to
  int what_if_rank = -1;  // the rank that set the path most often
  double what_if_s = 0;   // path_s had that rank been as fast as the median rank
};

struct RunAnalysis {
  int64_t run_id = 0;
  std::string origin;
  int world = 0;
  std::vector<RankBreakdown> breakdown;
  std::vector<CollectiveStats> collectives;
  std::vector<StragglerStats> stragglers;  // worst first
  ChronicRule chronic;
  std::optional<HangReport> hang;  // none for a run that ended `done`
  CriticalPath critical_path;
  std::vector<std::string> notes;  // what could not be analysed, and why
};

}  // namespace ranklab
