// How a metric spreads across the ranks of a run of many ranks, step by step: min, median,
// p90 and max over the ranks, computed once per step as its rows arrive (O(ranks) with
// nth_element), kept at a bounded number of samples however long the run. The live page
// draws them as bands where a line per rank would be noise.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace ranklab {

// The metrics drawn as a spread; each rank's value for one step (or bin) of its own.
enum class SpreadMetric { Loss, StepMs, WaitMs, SentMBps, kCount };
constexpr int kSpreadMetrics = int(SpreadMetric::kCount);

struct Quantiles {
  static constexpr float kNone = std::numeric_limits<float>::quiet_NaN();
  float min = kNone, median = kNone, p90 = kNone, max = kNone;  // NaN: no rank had a value
};

// The quantiles of `values`, reordered in place; the non-finite ones are left out.
Quantiles quantilesOf(std::vector<float>& values);

// One step across the ranks, or consecutive steps merged (their extremes kept, median and
// p90 averaged: what a chart can draw of them).
struct SpreadSample {
  double step = 0, time_s = 0, sent_mb = 0;  // where it lies on each x axis (mean of ranks)
  std::array<Quantiles, kSpreadMetrics> of{};
  int64_t count = 1;  // steps in it
  void merge(const SpreadSample& later);
  const Quantiles& operator[](SpreadMetric m) const { return of[std::size_t(m)]; }
};

// At most 2 * kKeep samples: when full, neighbours merge in pairs (as SampleSeries).
class SpreadSeries {
 public:
  static constexpr int kKeep = 512;
  void append(const SpreadSample& sample);
  const std::vector<SpreadSample>& samples() const { return samples_; }
  bool empty() const { return samples_.empty(); }
  void dropAfter(int64_t step);  // a restart trains those steps again

 private:
  std::vector<SpreadSample> samples_;
  int64_t unit_ = 1;
};

// One step's values as its ranks report it, until every rank has.
class SpreadCollector {
 public:
  void add(const std::array<float, kSpreadMetrics>& values);
  // The step's sample at `step` (x positions given), and the collector emptied.
  SpreadSample take(double step, double time_s, double sent_mb);

 private:
  std::array<std::vector<float>, kSpreadMetrics> values_;
};

}  // namespace ranklab
