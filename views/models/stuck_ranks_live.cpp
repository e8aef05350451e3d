#include "views/models/stuck_ranks_live.h"

#include <algorithm>

namespace ranklab {
namespace {

int64_t medianStep(const std::vector<RankSeries>& ranks) {
  if (ranks.empty()) return -1;
  std::vector<int64_t> steps;
  steps.reserve(ranks.size());
  for (const RankSeries& r : ranks) steps.push_back(r.step);
  std::nth_element(steps.begin(), steps.begin() + std::ptrdiff_t(steps.size() / 2), steps.end());
  return steps[steps.size() / 2];
}

StuckRank stuckOf(const RankSeries& r, bool silent, int64_t median) {
  StuckRank s;
  s.rank = r.rank;
  s.host = r.host;
  s.silent = silent;
  s.last_step = r.step;
  s.collectives = r.collectives;
  s.phase = lastPhaseOf(r);
  s.why = silent ? r.quiet_text
                 : std::to_string(median - r.step) + " steps behind the median (" +
                       std::to_string(median) + ")";
  return s;
}

}  // namespace

StuckReport stuckRanks(const RunSeries& run, int limit, int64_t behind_steps) {
  StuckReport report;
  if (run.finished()) return report;
  const std::vector<RankSeries>& ranks = run.ranks();
  report.median_step = medianStep(ranks);
  std::vector<StuckRank> all;
  for (const RankSeries& r : ranks) {
    if (r.failed || r.said_bye) continue;
    const bool silent = r.quiet;
    const bool behind = r.step >= 0 && r.step + behind_steps <= report.median_step;
    if (silent || behind)
      all.push_back(stuckOf(r, silent, report.median_step));
    else
      ++report.others;
  }
  std::stable_sort(all.begin(), all.end(), [](const StuckRank& a, const StuckRank& b) {
    return a.silent != b.silent ? a.silent : a.last_step < b.last_step;
  });
  const size_t kept = std::min(all.size(), size_t(std::max(0, limit)));
  report.more = int(all.size() - kept);
  all.resize(kept);
  report.ranks = std::move(all);
  return report;
}

std::string stuckHeadline(const StuckReport& report, int named) {
  std::string text;
  int shown = 0;
  for (const StuckRank& s : report.ranks) {
    if (shown == named) break;
    if (shown++) text += "; ";
    text +=
        "rank " + std::to_string(s.rank) + (s.silent ? " silent" : " behind") +
        (s.last_step < 0 ? " before its first step" : " after step " + std::to_string(s.last_step));
    std::string detail;
    if (s.collectives >= 0) detail = "collective " + std::to_string(s.collectives) + ", ";
    text += " (" + detail + "last doing " + s.phase + ")";
  }
  const int rest = int(report.ranks.size()) - shown + report.more;
  if (rest > 0) text += "; and " + std::to_string(rest) + " more";
  return text;
}

}  // namespace ranklab
