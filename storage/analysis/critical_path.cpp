#include "storage/analysis/critical_path.h"

#include <algorithm>
#include <map>

namespace ranklab {
namespace {

using StepRanks = std::vector<const StepPoint*>;

const StepPoint& lastToArrive(const StepRanks& ranks) {
  return **std::max_element(ranks.begin(), ranks.end(), [](const StepPoint* a, const StepPoint* b) {
    return a->arrival < b->arrival;
  });
}

const StepPoint& lastToEnd(const StepRanks& ranks) {
  return **std::max_element(ranks.begin(), ranks.end(),
                            [](const StepPoint* a, const StepPoint* b) { return a->end < b->end; });
}

int64_t exitOf(const StepRanks& ranks) {
  int64_t exit = ranks[0]->exit;
  for (const StepPoint* p : ranks) exit = std::max(exit, p->exit);
  return exit;
}

// How much earlier the step's last arrival would be had `rank` computed for the median time.
int64_t gainIfMedian(const StepRanks& ranks, int rank) {
  std::vector<int64_t> compute;
  for (const StepPoint* p : ranks) compute.push_back(p->arrival - p->start);
  // The lower middle: of two ranks, the faster one.
  const size_t middle = (compute.size() - 1) / 2;
  std::nth_element(compute.begin(), compute.begin() + long(middle), compute.end());
  const int64_t median = compute[middle];
  int64_t gate = 0, gate_if = 0;
  bool first = true;
  for (const StepPoint* p : ranks) {
    const int64_t own = p->arrival - p->start;
    const int64_t if_median = p->rank == rank ? std::min(own, median) : own;
    gate = first ? p->arrival : std::max(gate, p->arrival);
    gate_if = first ? p->start + if_median : std::max(gate_if, p->start + if_median);
    first = false;
  }
  return std::max<int64_t>(0, gate - gate_if);
}

using PathPieces = std::map<std::pair<int, std::string>, int64_t>;  // (rank, phase): ns

int64_t earliestStart(const StepRanks& ranks) {
  int64_t start = ranks[0]->start;
  for (const StepPoint* p : ranks) start = std::min(start, p->start);
  return start;
}

// The last rank's compute up to the collective, then the collective's transfer.
void addStep(PathPieces& path, const StepRanks& ranks, const StepPoint& last,
             const std::string& collective) {
  const std::pair<const char*, int64_t> pieces[] = {{"data", last.data},
                                                    {"forward", last.forward},
                                                    {"backward", last.backward},
                                                    {"compress", last.compress}};
  for (const auto& [phase, ns] : pieces) path[{last.rank, phase}] += ns;
  path[{-1, collective}] += std::max<int64_t>(0, exitOf(ranks) - last.arrival);
}

// From the previous step's collective to this step's start on its last rank: that rank's
// update, and whatever it did between the steps (evaluation, checkpoints, Python).
void addCarriedOver(PathPieces& path, const StepRanks& previous, const StepPoint& last) {
  for (const StepPoint* p : previous) {
    if (p->rank != last.rank) continue;
    path[{last.rank, "update"}] += p->update;
    path[{last.rank, "between steps"}] += std::max<int64_t>(0, last.start - p->end);
  }
}

// A run of consecutive steps ends with the update of the rank that ended last; returns
// that end.
int64_t closeSegment(PathPieces& path, const StepRanks& ranks) {
  const StepPoint& ender = lastToEnd(ranks);
  path[{ender.rank, "update"}] += ender.update;
  return ender.end;
}

// The rank that arrived last in the most steps (ties: the lower rank).
int mostOftenLast(const std::map<int64_t, StepRanks>& steps) {
  std::map<int, int> count;
  for (const auto& [step, ranks] : steps) ++count[lastToArrive(ranks).rank];
  const auto most = std::max_element(
      count.begin(), count.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return most == count.end() ? -1 : most->first;
}

}  // namespace

CriticalPath criticalPath(const std::vector<StepPoint>& points, const std::string& collective) {
  const auto steps = completeSteps(points);
  CriticalPath out;
  out.what_if_rank = mostOftenLast(steps);
  PathPieces path;
  int64_t gain = 0, span = 0, segment_start = 0;
  const StepRanks* previous = nullptr;
  int64_t previous_step = 0;
  for (const auto& [step, ranks] : steps) {
    const StepPoint& last = lastToArrive(ranks);
    if (previous != nullptr && step == previous_step + 1) {
      addCarriedOver(path, *previous, last);
    } else {
      if (previous != nullptr) span += closeSegment(path, *previous) - segment_start;
      segment_start = earliestStart(ranks);
    }
    addStep(path, ranks, last, collective);
    gain += gainIfMedian(ranks, out.what_if_rank);
    ++out.steps;
    previous = &ranks;
    previous_step = step;
  }
  if (previous != nullptr) span += closeSegment(path, *previous) - segment_start;
  int64_t total = 0;
  for (const auto& [key, ns] : path) total += ns;
  for (const auto& [key, ns] : path)
    if (ns > 0 && total > 0)
      out.shares.push_back({key.first, key.second, double(ns) / double(total)});
  std::stable_sort(out.shares.begin(), out.shares.end(),
                   [](const PathShare& a, const PathShare& b) { return a.share > b.share; });
  out.path_s = double(total) / 1e9;
  out.span_s = double(span) / 1e9;
  out.what_if_s = double(total - gain) / 1e9;
  return out;
}

}  // namespace ranklab
