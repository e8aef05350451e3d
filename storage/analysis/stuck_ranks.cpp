#include "storage/analysis/stuck_ranks.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace ranklab {
namespace {

// One rank's rows, as far as they go.
struct RankTrail {
  const StepPoint* last_step = nullptr;  // its highest-numbered step
  const SpanRow* last_span = nullptr;    // the one that began latest
  int64_t counted_collectives = 0;       // from its steps' counts
  int64_t collective_spans = 0;          // an import's collectives
  int64_t steps = 0;
  std::string host;
};

int worldOf(const StoredRun& s) {
  int world = std::max(s.run.world, 0);
  for (const StepPoint& p : s.points) world = std::max(world, p.rank + 1);
  for (const RankRow& r : s.ranks) world = std::max(world, r.rank + 1);
  return world;
}

std::vector<RankTrail> trailsOf(const StoredRun& s) {
  std::vector<RankTrail> trails(size_t(worldOf(s)));
  for (const StepPoint& p : s.points) {
    RankTrail& t = trails[size_t(p.rank)];
    if (!t.last_step || p.step > t.last_step->step) t.last_step = &p;
    t.counted_collectives += p.collectives;
    ++t.steps;
  }
  for (const SpanRow& span : s.spans) {
    if (span.rank < 0 || size_t(span.rank) >= trails.size()) continue;
    RankTrail& t = trails[size_t(span.rank)];
    if (!t.last_span || span.start_ns >= t.last_span->start_ns) t.last_span = &span;
    t.collective_spans += isCollectiveSpan(span);
  }
  for (const RankRow& r : s.ranks) trails[size_t(r.rank)].host = r.host;
  return trails;
}

// The step's last phase with time in it (its update, unless it had none).
std::string lastPhaseOf(const StepPoint& p) {
  const std::pair<const char*, int64_t> backwards[] = {
      {"update", p.update},     {"comm", p.comm},       {"wait", p.wait}, {"compress", p.compress},
      {"backward", p.backward}, {"forward", p.forward}, {"data", p.data}};
  for (const auto& [name, ns] : backwards)
    if (ns > 0) return name;
  return "update";
}

// A span begun after its last step ended (evaluate, checkpoint, a pipeline pass) says more
// than that step's phases.
std::string phaseOf(const RankTrail& t) {
  if (t.last_span && (!t.last_step || t.last_span->start_ns >= t.last_step->end))
    return t.last_span->kind;
  return t.last_step ? lastPhaseOf(*t.last_step) : "starting";
}

// Steps without collective counts (an import, an older store): the import's collective
// spans, else one collective a step, as the analysis models a ranklab run's.
int64_t collectivesOf(const RankTrail& t, bool counted, bool traced) {
  return counted ? t.counted_collectives : traced ? t.collective_spans : t.steps;
}

RankProgress progressOf(int rank, const RankTrail& t, bool counted, bool traced) {
  RankProgress p;
  p.rank = rank;
  p.host = t.host;
  p.last_step = t.last_step ? t.last_step->step : -1;
  p.last_collective = collectivesOf(t, counted, traced);
  p.phase = phaseOf(t);
  return p;
}

// The upper middle of the ranks' last steps: half the ranks or more got that far.
int64_t medianLastStep(const std::vector<RankTrail>& trails) {
  if (trails.empty()) return -1;
  std::vector<int64_t> last;
  last.reserve(trails.size());
  for (const RankTrail& t : trails) last.push_back(t.last_step ? t.last_step->step : -1);
  std::nth_element(last.begin(), last.begin() + last.size() / 2, last.end());
  return last[last.size() / 2];
}

// The launcher's last verdict: the rank it found dead or hung (-1: none), and its words.
std::pair<int, std::string> verdictOf(const std::vector<EventRow>& events) {
  std::pair<int, std::string> verdict{-1, ""};
  for (const EventRow& e : events)
    if (e.kind == "failure" || e.kind == "lost")
      verdict = {e.kind == "failure" ? e.rank : -1, e.text};
  return verdict;
}

}  // namespace

std::optional<HangReport> hangOf(const StoredRun& s) {
  if (s.run.status == "done") return std::nullopt;
  const std::vector<RankTrail> trails = trailsOf(s);
  const bool counted = std::any_of(s.points.begin(), s.points.end(),
                                   [](const StepPoint& p) { return p.collectives > 0; });
  const bool traced = std::any_of(s.spans.begin(), s.spans.end(), isCollectiveSpan);
  HangReport report;
  report.status = s.run.status;
  report.median_last_step = medianLastStep(trails);
  const auto [failed_rank, failure] = verdictOf(s.events);
  report.failure = failure;
  // In a synchronous job the others wait in the next collective, level with the stuck rank:
  // the launcher's verdict names it where the steps cannot.
  for (size_t rank = 0; rank < trails.size(); ++rank) {
    const RankProgress p = progressOf(int(rank), trails[rank], counted, traced);
    if (p.last_step < report.median_last_step || p.rank == failed_rank)
      report.ranks_behind.push_back(p);
  }
  std::stable_sort(
      report.ranks_behind.begin(), report.ranks_behind.end(),
      [](const RankProgress& a, const RankProgress& b) { return a.last_step < b.last_step; });
  return report;
}

}  // namespace ranklab
