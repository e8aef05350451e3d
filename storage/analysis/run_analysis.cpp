#include "storage/analysis/run_analysis.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "storage/analysis/critical_path.h"
#include "storage/analysis/stragglers.h"
#include "storage/analysis/stuck_ranks.h"
#include "storage/analysis/sync_points.h"

namespace ranklab {
namespace {

double seconds(int64_t ns) {
  return double(ns) / 1e9;
}

std::vector<RankBreakdown> breakdownOf(const std::vector<StepPoint>& points) {
  std::map<int, RankBreakdown> by_rank;
  std::map<int, std::pair<int64_t, int64_t>> extent;  // first start, last end
  std::map<int, std::pair<int64_t, int64_t>> comm;    // hidden, all
  std::map<int, int64_t> in_steps;
  for (const StepPoint& p : points) {
    RankBreakdown& b = by_rank[p.rank];
    b.rank = p.rank;
    ++b.steps;
    b.compute_s += seconds(p.forward + p.backward + p.compress + p.update);
    b.comm_s += seconds(p.comm - p.hidden);
    b.wait_s += seconds(p.wait);
    b.data_s += seconds(p.data);
    comm[p.rank].first += p.hidden;
    comm[p.rank].second += p.comm;
    in_steps[p.rank] += p.end - p.start;
    auto [it, added] = extent.try_emplace(p.rank, p.start, p.end);
    it->second = {std::min(it->second.first, p.start), std::max(it->second.second, p.end)};
  }
  std::vector<RankBreakdown> out;
  for (auto& [rank, b] : by_rank) {
    b.idle_s = std::max(0.0, seconds(extent[rank].second - extent[rank].first - in_steps[rank]));
    b.overlap = comm[rank].second > 0 ? double(comm[rank].first) / double(comm[rank].second) : 0;
    out.push_back(b);
  }
  return out;
}

std::vector<CollectiveStats> collectiveStats(const std::vector<SyncInstance>& instances) {
  std::map<std::string, CollectiveStats> by_kind;
  for (const SyncInstance& c : instances) {
    CollectiveStats& s = by_kind[c.kind];
    s.kind = c.kind;
    ++s.count;
    s.transfer_s += seconds(c.transferNs());
    const int64_t last_arrival = c.lastArrival();  // once: a collective has every rank
    for (const auto& [rank, arrival] : c.arrivals) s.wait_s += seconds(last_arrival - arrival);
    s.bus_bytes += c.bus_bytes;
  }
  std::vector<CollectiveStats> out;
  for (auto& [kind, s] : by_kind) {
    s.busbw_gbps = s.transfer_s > 0 ? s.bus_bytes / s.transfer_s / 1e9 : 0;
    out.push_back(s);
  }
  return out;
}

// The kind of collective that moved bytes longest: the name of a path's transfer piece.
std::string mainCollective(const std::vector<CollectiveStats>& collectives) {
  const auto most = std::max_element(collectives.begin(), collectives.end(),
                                     [](const CollectiveStats& a, const CollectiveStats& b) {
                                       return a.transfer_s < b.transfer_s;
                                     });
  return most == collectives.end() ? "comm" : most->kind;
}

}  // namespace

RunAnalysis analyzeRun(RunStore& store, int64_t run_id) {
  const auto run = store.run(run_id);
  if (!run) throw std::runtime_error(store.path() + ": no run with id " + std::to_string(run_id));
  RunAnalysis out;
  out.run_id = run_id;
  out.origin = run->origin;
  out.world = run->world;
  std::vector<StepPoint> points = stepPoints(store, run_id);
  const std::vector<SpanRow> spans = store.spans(run_id);
  if (run->status != "done")  // before the clocks are lined up: spans are on the ranks' own
    out.hang = hangOf({*run, points, spans, store.events(run_id), store.ranks(run_id)});
  if (points.empty()) {
    out.notes.push_back("no steps were recorded: nothing to analyse");
    return out;
  }
  // A PyTorch import's collectives are spans on clocks already lined up; any other run's
  // collective is each step's, its ranks' clocks lined up at their barrier exits here.
  const bool traced = std::any_of(spans.begin(), spans.end(), isCollectiveSpan);
  if (!traced) alignAtBarrierExits(points);
  out.breakdown = breakdownOf(points);
  const std::string why_not = syncModelRefusal(*run, points);
  if (!why_not.empty()) {
    out.notes.push_back(why_not);
    return out;
  }
  const std::vector<SyncInstance> instances =
      traced ? collectivesFromSpans(spans, run->world)
             : collectivesFromSteps(points,
                                    run->strategy == "ps-sync" ? "ps_push_pull" : "all_reduce");
  out.collectives = collectiveStats(instances);
  out.stragglers = stragglersOf(instances, out.breakdown, out.chronic);
  out.critical_path = criticalPath(points, mainCollective(out.collectives));
  if (traced && std::all_of(instances.begin(), instances.end(),
                            [](const SyncInstance& c) { return c.bus_bytes == 0; }))
    out.notes.push_back(
        "the traces record no collective sizes (PyTorch's legacy profiler writes no args; "
        "Kineto's record_param_comms does): no bus bandwidth");
  return out;
}

}  // namespace ranklab
