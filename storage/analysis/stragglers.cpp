#include "storage/analysis/stragglers.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace ranklab {
namespace {

constexpr int64_t kChronicWindow = 100;

// More than half of the window, and, among few ranks, more than a random pick reaches: its
// share 1/n plus three standard deviations over the window (2 ranks, 100 steps: 0.65).
ChronicRule chronicRule(int64_t compared, size_t ranks) {
  ChronicRule rule;
  rule.window = std::min(kChronicWindow, compared);
  if (rule.window == 0 || ranks == 0) return rule;
  const double p = 1.0 / double(ranks);
  rule.share_above = std::max(0.5, p + 3 * std::sqrt(p * (1 - p) / double(rule.window)));
  return rule;
}

std::string kindOf(const StragglerStats& s, const ChronicRule& rule) {
  if (s.last_arrivals == 0) return "none";
  return rule.window > 0 && s.recent_share > rule.share_above ? "chronic" : "moving";
}

}  // namespace

std::vector<StragglerStats> stragglersOf(const std::vector<SyncInstance>& instances,
                                         const std::vector<RankBreakdown>& ranks,
                                         ChronicRule& rule) {
  std::map<int, StragglerStats> by_rank;
  for (const RankBreakdown& r : ranks) by_rank[r.rank].rank = r.rank;
  int64_t compared = 0;
  for (const SyncInstance& c : instances) compared += c.arrivals.size() >= 2;
  rule = chronicRule(compared, by_rank.size());
  int64_t seen = 0;  // collectives compared so far: the window is the last rule.window
  for (const SyncInstance& c : instances) {
    if (c.arrivals.size() < 2) continue;
    const int last = c.lastRank();
    const int64_t last_arrival = c.lastArrival();  // once: a collective has every rank
    StragglerStats& s = by_rank[last];
    s.rank = last;
    ++s.last_arrivals;
    if (++seen > compared - rule.window) ++s.recent_share;  // a count until divided below
    for (const auto& [rank, arrival] : c.arrivals)
      s.caused_wait_s += double(last_arrival - arrival) / 1e9;
  }
  std::vector<StragglerStats> out;
  for (auto& [rank, s] : by_rank) {
    s.last_share = compared > 0 ? double(s.last_arrivals) / double(compared) : 0;
    s.recent_share = rule.window > 0 ? s.recent_share / double(rule.window) : 0;
    s.kind = kindOf(s, rule);
    out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(), [](const StragglerStats& a, const StragglerStats& b) {
    return a.caused_wait_s != b.caused_wait_s ? a.caused_wait_s > b.caused_wait_s
                                              : a.last_arrivals > b.last_arrivals;
  });
  return out;
}

}  // namespace ranklab
