#include "views/models/breakdown_spread.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ranklab {

double partSeconds(const RankBreakdown& rank, int part) {
  switch (part) {
    case 0:
      return rank.compute_s;
    case 1:
      return rank.comm_s;
    case 2:
      return rank.wait_s;
    case 3:
      return rank.data_s;
    default:
      return rank.idle_s;
  }
}

namespace {

// The nearest-rank quantile of ascending values.
double quantile(const std::vector<std::pair<double, int>>& sorted, double q) {
  const auto at = size_t(std::lround(q * double(sorted.size() - 1)));
  return sorted[at].first;
}

PartSpread spreadOf(std::vector<std::pair<double, int>> values) {
  std::sort(values.begin(), values.end());
  PartSpread s;
  s.min = values.front().first;
  s.min_rank = values.front().second;
  s.p10 = quantile(values, 0.1);
  s.median = quantile(values, 0.5);
  s.p90 = quantile(values, 0.9);
  s.max = values.back().first;
  for (auto it = values.rbegin(); it != values.rend() && int(s.most.size()) < kMostRanks; ++it)
    s.most.push_back(it->second);
  return s;
}

}  // namespace

std::array<PartSpread, kBreakdownParts> breakdownSpread(const std::vector<RankBreakdown>& ranks) {
  std::array<PartSpread, kBreakdownParts> spreads{};
  if (ranks.empty()) return spreads;
  for (int part = 0; part < kBreakdownParts; ++part) {
    std::vector<std::pair<double, int>> values;
    values.reserve(ranks.size());
    for (const RankBreakdown& r : ranks) values.emplace_back(partSeconds(r, part), r.rank);
    spreads[size_t(part)] = spreadOf(std::move(values));
  }
  return spreads;
}

}  // namespace ranklab
