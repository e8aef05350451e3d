// Who is stuck, live: the ranks the launcher found silent (no message, not even a heartbeat,
// for two beats: stopped, frozen, cut off) and those behind the others' steps, each with its
// last step, the collectives it completed and what it was last doing. In a job whose ranks
// wait for each other a silent rank is the one they wait for; their steps alone cannot say
// which (they wait level with it), its silence can.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "views/models/run_series.h"

namespace ranklab {

struct StuckRank {
  int rank = -1;
  std::string host;
  bool silent = false;  // else behind
  int64_t last_step = -1;
  int64_t collectives = -1;  // -1: not counted (a stored run's bins)
  std::string phase;         // its latest step's last phase
  std::string why;           // the launcher's words, or how far behind it is
};

struct StuckReport {
  std::vector<StuckRank> ranks;  // the silent ones first, then by last step
  int more = 0;                  // past the list's limit
  int64_t median_step = -1;      // of every rank's last step
  int others = 0;                // neither silent nor behind
  bool any() const { return !ranks.empty() || more > 0; }
};

// Behind: `behind_steps` or more steps short of the ranks' median (a synchronous job's
// ranks are a step apart at most). A finished run has none stuck.
StuckReport stuckRanks(const RunSeries& run, int limit = 16, int64_t behind_steps = 3);

// "rank 333 silent after step 500 (collective 1,500, last doing comm)" and so on, for the
// status line: the first few, then how many more.
std::string stuckHeadline(const StuckReport& report, int named = 3);

}  // namespace ranklab
