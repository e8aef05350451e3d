#include "storage/analysis/run_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "storage/analysis/critical_path.h"
#include "storage/analysis/sync_points.h"

namespace ranklab {
namespace {

// A run's step points on one clock (aligned at its barrier exits, unless a PyTorch import's
// collectives lined its clocks up already).
std::vector<StepPoint> alignedPoints(RunStore& store, int64_t run_id) {
  const auto run = store.run(run_id);
  if (!run) throw std::runtime_error(store.path() + ": no run with id " + std::to_string(run_id));
  std::vector<StepPoint> points = stepPoints(store, run_id);
  const std::vector<SpanRow> spans = store.spans(run_id);
  if (std::none_of(spans.begin(), spans.end(), isCollectiveSpan)) alignAtBarrierExits(points);
  return points;
}

std::set<int64_t> completeStepNumbers(const std::vector<StepPoint>& points) {
  std::set<int64_t> numbers;
  for (const auto& [step, ranks] : completeSteps(points)) numbers.insert(step);
  return numbers;
}

std::vector<StepPoint> onlySteps(const std::vector<StepPoint>& points,
                                 const std::set<int64_t>& keep) {
  std::vector<StepPoint> out;
  for (const StepPoint& p : points)
    if (keep.count(p.step)) out.push_back(p);
  return out;
}

// Seconds on the critical path by (rank, phase); `span_s` the steps' span on the clock.
std::map<std::pair<int, std::string>, double> pathSeconds(const std::vector<StepPoint>& points,
                                                          double* span_s) {
  const CriticalPath path = criticalPath(points, "");
  *span_s = path.span_s;
  std::map<std::pair<int, std::string>, double> out;
  for (const PathShare& s : path.shares) {
    // The collective's transfer goes by "comm" in either run, whatever each calls it.
    out[{s.rank, s.rank < 0 ? "comm" : s.phase}] += s.share * path.path_s;
  }
  return out;
}

}  // namespace

RunDiff diffRuns(RunStore& store, int64_t run_a, int64_t run_b) {
  const std::vector<StepPoint> all_a = alignedPoints(store, run_a);
  const std::vector<StepPoint> all_b = alignedPoints(store, run_b);
  std::set<int64_t> common;
  const std::set<int64_t> in_b = completeStepNumbers(all_b);
  for (int64_t step : completeStepNumbers(all_a))
    if (in_b.count(step)) common.insert(step);
  if (common.empty())
    throw std::runtime_error("runs " + std::to_string(run_a) + " and " + std::to_string(run_b) +
                             " share no step number that every rank of both recorded");
  const std::vector<StepPoint> a = onlySteps(all_a, common), b = onlySteps(all_b, common);
  RunDiff diff;
  diff.run_a = run_a;
  diff.run_b = run_b;
  diff.steps = int64_t(common.size());
  std::map<std::pair<int, std::string>, double> parts = pathSeconds(b, &diff.b_s);
  for (const auto& [key, seconds] : pathSeconds(a, &diff.a_s)) parts[key] -= seconds;
  diff.total_delta_s = diff.b_s - diff.a_s;
  for (const auto& [key, delta] : parts) {
    diff.parts.push_back({key.first, key.second, delta});
    diff.parts_sum_s += delta;
  }
  std::stable_sort(diff.parts.begin(), diff.parts.end(), [](const DiffPart& x, const DiffPart& y) {
    return std::abs(x.delta_s) > std::abs(y.delta_s);
  });
  return diff;
}

}  // namespace ranklab
