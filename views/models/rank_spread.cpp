#include "views/models/rank_spread.h"
#include "views/models/halving_samples.h"

#include <algorithm>
#include <cmath>

namespace ranklab {

Quantiles quantilesOf(std::vector<float>& values) {
  std::erase_if(values, [](float v) { return !std::isfinite(v); });
  Quantiles q;
  if (values.empty()) return q;
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  q.min = *low;
  q.max = *high;
  // Two selections, the second in what lies above the first: O(n) in all.
  const auto median = values.begin() + std::ptrdiff_t(values.size() / 2);
  std::nth_element(values.begin(), median, values.end());
  q.median = *median;
  const auto p90 = values.begin() + std::ptrdiff_t(values.size() * 9 / 10);
  std::nth_element(median, p90, values.end());
  q.p90 = *p90;
  return q;
}

namespace {

// Count-weighted mean of two quantiles, either of them possibly NaN (no value).
float blend(float a, int64_t na, float b, int64_t nb) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return float((double(a) * double(na) + double(b) * double(nb)) / double(na + nb));
}

float lowest(float a, float b) {
  return std::isnan(a) ? b : std::isnan(b) ? a : std::min(a, b);
}

float highest(float a, float b) {
  return std::isnan(a) ? b : std::isnan(b) ? a : std::max(a, b);
}

}  // namespace

void SpreadSample::merge(const SpreadSample& later) {
  for (size_t m = 0; m < of.size(); ++m) {
    Quantiles& q = of[m];
    const Quantiles& o = later.of[m];
    q.min = lowest(q.min, o.min);
    q.max = highest(q.max, o.max);
    q.median = blend(q.median, count, o.median, later.count);
    q.p90 = blend(q.p90, count, o.p90, later.count);
  }
  step = later.step;
  time_s = later.time_s;
  sent_mb = later.sent_mb;
  count += later.count;
}

void SpreadSeries::append(const SpreadSample& sample) {
  appendHalving(samples_, unit_, kKeep, sample);
}

void SpreadSeries::dropAfter(int64_t step) {
  while (!samples_.empty() && samples_.back().step > double(step)) samples_.pop_back();
}

void SpreadCollector::add(const std::array<float, kSpreadMetrics>& values) {
  for (size_t m = 0; m < values.size(); ++m) values_[m].push_back(values[m]);
}

SpreadSample SpreadCollector::take(double step, double time_s, double sent_mb) {
  SpreadSample sample;
  sample.step = step;
  sample.time_s = time_s;
  sample.sent_mb = sent_mb;
  for (size_t m = 0; m < values_.size(); ++m) {
    sample.of[m] = quantilesOf(values_[m]);
    values_[m].clear();
  }
  return sample;
}

}  // namespace ranklab
