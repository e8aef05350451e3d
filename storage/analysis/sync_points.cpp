#include "storage/analysis/sync_points.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace ranklab {
namespace {

int64_t median(std::vector<int64_t> values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

StepPoint pointOf(const StepRow& s) {
  StepPoint p;
  p.rank = s.rank;
  p.step = s.step;
  p.data = s.data_ns;
  p.forward = s.forward_ns;
  p.backward = s.backward_ns;
  p.compress = s.compress_ns;
  p.wait = s.wait_ns;
  p.comm = s.comm_ns;
  p.hidden = std::min(s.comm_hidden_ns, s.comm_ns);
  p.update = s.update_ns;
  p.bytes_tx = s.bytes_tx;
  p.pipelined = s.stashed > 0;
  p.collectives = s.allreduces + s.reduce_scatters + s.all_gathers;
  p.end = s.time_ns;
  p.exit = p.end - p.update;
  p.arrival = p.exit - (p.comm - p.hidden) - p.wait;
  p.start = p.arrival - (p.data + p.forward + p.backward + p.compress);
  return p;
}

double busFactor(const std::string& kind, size_t n) {
  if (n < 2) return 0;
  const double share = double(n - 1) / double(n);
  if (kind == "all_reduce") return 2 * share;
  if (kind == "all_gather" || kind == "reduce_scatter") return share;
  return 1;
}

}  // namespace

std::vector<StepPoint> stepPoints(RunStore& store, int64_t run_id) {
  std::vector<StepPoint> points;
  store.forEachStep(run_id, [&](const StepRow& s) { points.push_back(pointOf(s)); });
  return points;
}

void alignAtBarrierExits(std::vector<StepPoint>& points) {
  std::map<int, std::map<int64_t, int64_t>> exits;  // rank: step: exit
  for (const StepPoint& p : points) exits[p.rank][p.step] = p.exit;
  if (exits.size() < 2) return;
  const auto& reference = exits.begin()->second;
  std::map<int, int64_t> shift;
  for (const auto& [rank, steps] : exits) {
    std::vector<int64_t> gaps;
    for (const auto& [step, exit] : steps)
      if (reference.count(step)) gaps.push_back(reference.at(step) - exit);
    shift[rank] = gaps.empty() ? 0 : median(gaps);
  }
  for (StepPoint& p : points) {
    const int64_t d = shift[p.rank];
    p.start += d;
    p.arrival += d;
    p.exit += d;
    p.end += d;
  }
}

std::string syncModelRefusal(const RunRow& run, const std::vector<StepPoint>& points) {
  if (run.strategy == "ps-async" || run.strategy == "local-sgd")
    return "no collective joins every rank's step under strategy " + run.strategy +
           ": the collectives, stragglers and critical path are not computed";
  if (std::any_of(points.begin(), points.end(), [](const StepPoint& p) { return p.pipelined; }))
    return "a pipeline's stages hand activations on rather than meeting at one collective a "
           "step: the collectives, stragglers and critical path are not computed for it yet";
  return "";
}

int64_t SyncInstance::lastArrival() const {
  int64_t last = arrivals.empty() ? end : arrivals[0].second;
  for (const auto& [rank, at] : arrivals) last = std::max(last, at);
  return last;
}

int SyncInstance::lastRank() const {
  const auto it =
      std::max_element(arrivals.begin(), arrivals.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  return it == arrivals.end() ? -1 : it->first;
}

int64_t SyncInstance::transferNs() const {
  return std::max<int64_t>(0, end - lastArrival());
}

std::map<int64_t, std::vector<const StepPoint*>> completeSteps(
    const std::vector<StepPoint>& points) {
  std::set<int> ranks;
  std::map<int64_t, std::vector<const StepPoint*>> by_step;
  for (const StepPoint& p : points) {
    ranks.insert(p.rank);
    by_step[p.step].push_back(&p);
  }
  for (auto it = by_step.begin(); it != by_step.end();)
    it = it->second.size() == ranks.size() ? std::next(it) : by_step.erase(it);
  return by_step;
}

std::vector<SyncInstance> collectivesFromSpans(const std::vector<SpanRow>& spans, int world) {
  std::map<int, SyncInstance> by_part;
  for (const SpanRow& s : spans) {
    if (!isCollectiveSpan(s)) continue;
    SyncInstance& c = by_part[s.part];
    c.kind = s.kind;
    c.arrivals.emplace_back(s.rank, s.start_ns);
    c.end = std::max(c.end, s.end_ns);
    c.bus_bytes = std::max(c.bus_bytes, double(s.bytes));
  }
  std::set<int> ranks;
  for (const SpanRow& s : spans)
    if (isCollectiveSpan(s)) ranks.insert(s.rank);
  std::vector<SyncInstance> out;
  for (auto& [part, c] : by_part) {
    if (c.arrivals.size() != ranks.size()) continue;  // a rank's trace lacks it: no last arrival
    c.bus_bytes *= busFactor(c.kind, size_t(std::max<int>(world, int(c.arrivals.size()))));
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<SyncInstance> collectivesFromSteps(const std::vector<StepPoint>& points,
                                               const std::string& kind) {
  std::vector<SyncInstance> out;
  for (const auto& [step, ranks] : completeSteps(points)) {
    if (ranks.size() < 2) continue;
    SyncInstance c;
    c.kind = kind;
    c.end = std::numeric_limits<int64_t>::min();
    for (const StepPoint* p : ranks) {
      c.arrivals.emplace_back(p->rank, p->arrival);
      c.end = std::max(c.end, p->exit);
      c.bus_bytes += double(p->bytes_tx) / double(ranks.size());  // bytes each rank sent
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace ranklab
