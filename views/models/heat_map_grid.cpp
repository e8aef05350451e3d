#include "views/models/heat_map_grid.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace ranklab {
namespace {

// One sample's value for the metric: per step of it.
double heatValue(const Sample& s, HeatMetric metric) {
  switch (metric) {
    case HeatMetric::WorkMs:
      return sampleValue(s, Metric::BusyMs);
    case HeatMetric::StepMs:
      return sampleValue(s, Metric::StepMs);
    case HeatMetric::WaitMs:
      return sampleValue(s, Metric::WaitMs);
    case HeatMetric::SentMB:
      return s.count ? s.tx_bytes / double(s.count) / 1e6 : std::nan("");
    case HeatMetric::kCount:
      break;
  }
  return std::nan("");
}

// The steps any rank reported: the first a sample covers to the last.
std::pair<int64_t, int64_t> stepsOf(const RunSeries& run) {
  int64_t first = std::numeric_limits<int64_t>::max(), last = -1;
  for (const RankSeries& r : run.ranks()) {
    const std::vector<Sample>& s = r.series.samples();
    if (s.empty()) continue;
    first = std::min(first, int64_t(s.front().step) - s.front().count + 1);
    last = std::max(last, int64_t(s.back().step));
  }
  return {std::max<int64_t>(0, std::min(first, last)), last};
}

// The first step of each column, and one past the last column's end: computed once a
// build, not for each of a million samples.
std::vector<int64_t> columnStarts(const HeatMapGrid& g) {
  std::vector<int64_t> starts(size_t(g.columns) + 1);
  for (int c = 0; c < g.columns; ++c) starts[size_t(c)] = g.columnFirstStep(c);
  starts[size_t(g.columns)] = g.last_step + 1;
  return starts;
}

// Each column's mean of one rank's samples, weighted by the steps of each it holds: one
// walk over the samples and the columns together. Returns the columns touched [first, end);
// `sum` and `weight` are zero outside them on return, as the caller must leave them.
std::pair<int, int> rankColumns(const SampleSeries& series, HeatMetric metric,
                                const std::vector<int64_t>& starts, std::vector<double>& sum,
                                std::vector<double>& weight) {
  const int columns = int(starts.size()) - 1;
  const int64_t first_step = starts.front(), last_step = starts.back() - 1;
  int c = 0, touched_first = columns, touched_end = 0;
  for (const Sample& s : series.samples()) {
    const int64_t last = int64_t(s.step), first = last - s.count + 1;
    if (last < first_step || first > last_step) continue;
    const double v = heatValue(s, metric);
    if (!std::isfinite(v)) continue;
    const int64_t from = std::max(first, first_step), to = std::min(last, last_step);
    while (c > 0 && starts[size_t(c)] > from) --c;  // samples come in step order: rarely
    while (starts[size_t(c) + 1] <= from) ++c;
    for (int k = c; k < columns && starts[size_t(k)] <= to; ++k) {
      const int64_t overlap =
          std::min(to, starts[size_t(k) + 1] - 1) - std::max(from, starts[size_t(k)]) + 1;
      if (overlap <= 0) continue;
      sum[size_t(k)] += v * double(overlap);
      weight[size_t(k)] += double(overlap);
      touched_first = std::min(touched_first, k);
      touched_end = std::max(touched_end, k + 1);
    }
  }
  return {touched_first, touched_end};
}

// The colour scale: robust to one wild cell (a checkpoint's step), as the 2nd to 98th
// percentile of the cells.
void fitScale(HeatMapGrid& g) {
  std::vector<float> finite;
  finite.reserve(g.values.size());
  for (float v : g.values)
    if (std::isfinite(v)) finite.push_back(v);
  if (finite.empty()) return;
  const auto at = [&](double q) {
    auto it = finite.begin() + std::ptrdiff_t(q * double(finite.size() - 1));
    std::nth_element(finite.begin(), it, finite.end());
    return *it;
  };
  g.low = at(0.02);
  g.high = at(0.98);
  // Nearly every cell alike (ranks in lockstep): the scale reaches the worst cell instead.
  if (g.high <= g.low) g.high = *std::max_element(finite.begin(), finite.end());
}

}  // namespace

const char* heatMetricName(HeatMetric metric) {
  switch (metric) {
    case HeatMetric::WorkMs:
      return "own work per step (ms: time less waiting)";
    case HeatMetric::StepMs:
      return "time per step (ms)";
    case HeatMetric::WaitMs:
      return "waiting for other ranks (ms per step)";
    case HeatMetric::SentMB:
      return "MB sent per step";
    case HeatMetric::kCount:
      break;
  }
  return "?";
}

bool heatLowIsWorse(HeatMetric metric) {
  return metric == HeatMetric::SentMB;
}

int64_t HeatMapGrid::columnFirstStep(int column) const {
  return first_step + int64_t(std::ceil(double(column) * steps_per_column - 1e-9));
}

int64_t HeatMapGrid::columnLastStep(int column) const {
  return column + 1 >= columns ? last_step : columnFirstStep(column + 1) - 1;
}

int HeatMapGrid::rowFirst(int row) const {
  return first_row + int(std::ceil(double(row) * ranks_per_row - 1e-9));
}

int HeatMapGrid::rowLast(int row) const {
  return row + 1 >= rows ? first_row + row_count - 1 : rowFirst(row + 1) - 1;
}

std::vector<int> heatOrder(const RunSeries& run, HeatOrder order) {
  const std::vector<RankSeries>& ranks = run.ranks();
  std::vector<int> rows(ranks.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = int(i);
  if (order == HeatOrder::ByHost) {
    std::map<std::string, size_t> first_seen;  // a host's place: where its first rank is
    for (size_t i = 0; i < ranks.size(); ++i) first_seen.emplace(ranks[i].host, i);
    std::stable_sort(rows.begin(), rows.end(), [&](int a, int b) {
      return first_seen[ranks[size_t(a)].host] < first_seen[ranks[size_t(b)].host];
    });
  }
  return rows;
}

HeatMapGrid buildHeatMap(const RunSeries& run, HeatMetric metric, HeatOrder order,
                         const HeatWindow& window, int columns, int rows) {
  HeatMapGrid g;
  g.order = heatOrder(run, order);
  const auto [first, last] = stepsOf(run);
  const bool whole = window.last_step < window.first_step;
  g.first_step = whole ? first : std::max(first, window.first_step);
  g.last_step = whole ? last : std::min(last, window.last_step);
  const int total = int(g.order.size());
  g.first_row = std::clamp(window.first_row, 0, std::max(0, total - 1));
  g.row_count = window.rows < 0 ? total - g.first_row : std::min(window.rows, total - g.first_row);
  if (g.last_step < g.first_step || g.row_count <= 0 || columns <= 0 || rows <= 0) return g;
  const int64_t steps = g.last_step - g.first_step + 1;
  g.columns = int(std::min<int64_t>(columns, steps));
  g.steps_per_column = double(steps) / double(g.columns);
  g.rows = std::min(rows, g.row_count);
  g.ranks_per_row = double(g.row_count) / double(g.rows);
  g.values.assign(size_t(g.rows) * size_t(g.columns), HeatMapGrid::kEmpty);
  g.worst_ranks.assign(g.values.size(), -1);
  std::vector<double> sum(size_t(g.columns)), weight(size_t(g.columns));
  const std::vector<int64_t> starts = columnStarts(g);
  const bool low_worse = heatLowIsWorse(metric);
  for (int row = 0; row < g.rows; ++row) {
    for (int i = g.rowFirst(row); i <= g.rowLast(row); ++i) {
      const RankSeries& r = run.ranks()[size_t(g.order[size_t(i)])];
      const auto [from, end] = rankColumns(r.series, metric, starts, sum, weight);
      for (int c = from; c < end; ++c) {
        if (weight[size_t(c)] <= 0) continue;
        const float v = float(sum[size_t(c)] / weight[size_t(c)]);
        sum[size_t(c)] = weight[size_t(c)] = 0;  // ready for the next rank
        const size_t cell = size_t(row) * size_t(g.columns) + size_t(c);
        const float held = g.values[cell];
        if (std::isnan(held) || (low_worse ? v < held : v > held)) {
          g.values[cell] = v;
          g.worst_ranks[cell] = r.rank;
        }
      }
    }
  }
  if (order == HeatOrder::ByHost) {
    for (int i = 0; i < total; ++i) {
      const std::string& host = run.ranks()[size_t(g.order[size_t(i)])].host;
      if (i == 0 || host != run.ranks()[size_t(g.order[size_t(i - 1)])].host)
        g.host_starts.emplace_back(i, host);
    }
  }
  fitScale(g);
  return g;
}

}  // namespace ranklab
