// What the live page draws of a run of many ranks (RunSeries::manyRanks): for one metric,
// the ranks' spread per step as bands (min to max, median to p90), the median as a line, and
// the few worst ranks' own lines, named in the legend.
#pragma once

#include <QColor>
#include <optional>
#include <vector>

#include "views/curve_chart.h"
#include "views/models/run_series.h"

namespace ranklab {

constexpr int kWorstRanks = 3;       // own lines drawn beside the spread
constexpr int kWorstOverSteps = 20;  // the worst: by their mean over about this many last steps
constexpr int kRangeBandKey = 0, kP90BandKey = 1;
constexpr int kMedianKey = -2;  // the median's curve (ranks' curves are keyed by rank)

// The spread of `spread` across ranks and the worst ranks' `metric` lines. `low_is_worse`:
// bandwidth, where the slowest ranks send the least per second.
struct SpreadView {
  SpreadMetric spread;
  Metric metric;
  bool low_is_worse = false;
  QColor colour;
  // What the worst are chosen by, when not `metric`: in a run that synchronises every step
  // each rank's step takes as long, and the slowest rank is the one that waits least.
  std::optional<Metric> rank_by;
};

// The ranks of the run worst by `view.metric`: their mean over their last kWorstOverSteps
// steps, k at most, worst first. O(ranks): each rank's last few samples.
std::vector<int> worstRanks(const RunSeries& run, const SpreadView& view, int k = kWorstRanks);

std::vector<Band> spreadBands(const RunSeries& run, const SpreadView& view, XAxis x, int budget);
// The median line, then the worst ranks' lines.
std::vector<Curve> spreadCurves(const RunSeries& run, const SpreadView& view, XAxis x, int budget);
// " across 1,024 ranks · median, 3 slowest" — what the title adds.
QString spreadNote(const RunSeries& run, const QString& worst);

}  // namespace ranklab
