// A curve's samples kept within a bound: each sample merges appends until it stands for
// `unit` of them; when 2 * keep are held, neighbours merge in pairs and the unit doubles.
// One rule for SampleSeries (run_series.h) and SpreadSeries (rank_spread.h).
#pragma once

#include <cstdint>
#include <vector>

namespace ranklab {

// T has count (appends it stands for) and merge(const T& later).
template <typename T>
void appendHalving(std::vector<T>& samples, int64_t& unit, int keep, const T& sample) {
  if (!samples.empty() && samples.back().count < unit) {
    samples.back().merge(sample);
    return;
  }
  samples.push_back(sample);
  if (samples.size() < size_t(2 * keep)) return;
  size_t out = 0;
  for (size_t i = 0; i + 1 < samples.size(); i += 2) {
    T merged = samples[i];
    merged.merge(samples[i + 1]);
    samples[out++] = merged;
  }
  samples.resize(out);
  unit *= 2;
}

}  // namespace ranklab
