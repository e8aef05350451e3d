#include "views/spread_curves.h"

#include <QLocale>
#include <algorithm>
#include <cmath>

#include "views/models/rank_colour.h"

namespace ranklab {

namespace {

// The run's spread samples, neighbours merged to at most `budget` (a chart has so many pixels).
std::vector<SpreadSample> spreadSamples(const RunSeries& run, int budget) {
  const std::vector<SpreadSample>& all = run.spread().samples();
  const size_t group = std::max<size_t>(1, (all.size() + size_t(budget) - 1) / size_t(budget));
  std::vector<SpreadSample> merged;
  for (size_t i = 0; i < all.size(); i += group) {
    SpreadSample s = all[i];
    for (size_t j = i + 1; j < std::min(all.size(), i + group); ++j) s.merge(all[j]);
    merged.push_back(s);
  }
  return merged;
}

// A rank's mean of the metric over its last samples holding kWorstOverSteps steps or more.
double recentMean(const RankSeries& r, Metric metric) {
  const std::vector<Sample>& samples = r.series.samples();
  Sample recent;
  bool any = false;
  for (size_t i = samples.size(); i-- > 0 && recent.count < kWorstOverSteps;) {
    if (any) {
      Sample earlier = samples[i];
      earlier.merge(recent);
      recent = earlier;
    } else {
      recent = samples[i];
      any = true;
    }
  }
  if (!any) return std::nan("");
  return sampleValue(recent, metric);
}

}  // namespace

std::vector<int> worstRanks(const RunSeries& run, const SpreadView& view, int k) {
  std::vector<std::pair<double, int>> scored;  // (badness, rank)
  for (const RankSeries& r : run.ranks()) {
    const double mean = recentMean(r, view.rank_by.value_or(view.metric));
    if (std::isfinite(mean)) scored.emplace_back(view.low_is_worse ? -mean : mean, r.rank);
  }
  const size_t n = std::min(scored.size(), size_t(std::max(0, k)));
  std::partial_sort(scored.begin(), scored.begin() + std::ptrdiff_t(n), scored.end(),
                    [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<int> worst;
  for (size_t i = 0; i < n; ++i) worst.push_back(scored[i].second);
  return worst;
}

std::vector<Band> spreadBands(const RunSeries& run, const SpreadView& view, XAxis x, int budget) {
  Band range{kRangeBandKey, CurveChart::tr("min–max"), view.colour, {}, {}};
  Band upper{kP90BandKey, CurveChart::tr("median–p90"), view.colour, {}, {}};
  range.colour.setAlpha(50);
  upper.colour.setAlpha(110);
  for (const SpreadSample& s : spreadSamples(run, budget)) {
    const Quantiles& q = s[view.spread];
    if (std::isnan(q.median)) continue;
    const double at = sampleX(s, x);
    range.lower.append(QPointF(at, q.min));
    range.upper.append(QPointF(at, q.max));
    upper.lower.append(QPointF(at, q.median));
    upper.upper.append(QPointF(at, q.p90));
  }
  if (range.lower.isEmpty()) return {};
  return {range, upper};
}

std::vector<Curve> spreadCurves(const RunSeries& run, const SpreadView& view, XAxis x, int budget) {
  std::vector<Curve> curves;
  Curve median{
      kMedianKey, CurveChart::tr("median"), view.colour.darker(160), 2.2, false, false, true, {}};
  for (const SpreadSample& s : spreadSamples(run, budget))
    if (const float m = s[view.spread].median; !std::isnan(m))
      median.points.append(QPointF(sampleX(s, x), m));
  if (median.points.isEmpty()) return curves;
  curves.push_back(std::move(median));
  for (int rank : worstRanks(run, view)) {
    const RankSeries& r = run.ranks()[size_t(run.rowOfRank(rank))];
    curves.push_back({rank, CurveChart::tr("rank %1").arg(rank), rankColour(rank), 1.4, false,
                      false, true, curvePoints(r.series, view.metric, x, 0, budget)});
  }
  return curves;
}

QString spreadNote(const RunSeries& run, const QString& worst) {
  return CurveChart::tr(" across %1 ranks · median, %2 %3")
      .arg(QLocale().toString(qlonglong(run.ranks().size())))
      .arg(kWorstRanks)
      .arg(worst);
}

}  // namespace ranklab
