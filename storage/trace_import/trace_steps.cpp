#include "storage/trace_import/trace_steps.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>

namespace ranklab {
namespace {

using Events = std::vector<const TraceEvent*>;

// Start order, ties in the file's order (the events' places in one vector): a total order,
// so an event is found again by binary search alone however many share its start.
bool byStart(const TraceEvent* a, const TraceEvent* b) {
  return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : std::less<>()(a, b);
}

// The first of `events` (in byStart order) that starts at or after `ns`.
Events::const_iterator firstFrom(const Events& events, Events::const_iterator from, int64_t ns) {
  return std::lower_bound(from, events.end(), ns,
                          [](const TraceEvent* e, int64_t t) { return e->start_ns < t; });
}

Events eventsOf(const RankTrace& trace, TraceClass kind, CollectiveSource source) {
  Events out;
  for (const TraceEvent& e : trace.events)
    if (e.kind == kind && (kind != TraceClass::kCollective || e.source == source))
      out.push_back(&e);
  std::sort(out.begin(), out.end(), byStart);
  return out;
}

int64_t median(std::vector<int64_t> values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
}

// A collective's step number (-1: before the first step) and its number within that step:
// the same on every rank, so an event one rank's trace lacks moves no other match.
using CollectiveKey = std::pair<int64_t, int>;

// Index of the last step that started at or before `ns` (-1: before the first).
int stepIndexAt(const Events& steps, int64_t ns) {
  const auto it = std::upper_bound(steps.begin(), steps.end(), ns,
                                   [](int64_t t, const TraceEvent* s) { return t < s->start_ns; });
  return int(it - steps.begin()) - 1;
}

// Every rank's collectives of the chosen source, by start, with their keys.
struct KeyedCollectives {
  std::vector<Events> events;
  std::vector<std::vector<CollectiveKey>> keys;
  std::map<CollectiveKey, int> part;         // every key: its number in the run
  std::vector<CollectiveKey> on_every_rank;  // sorted
};

KeyedCollectives keyedCollectives(const std::vector<RankTrace>& traces) {
  KeyedCollectives out;
  const CollectiveSource source = commonCollectiveSource(traces);
  std::map<CollectiveKey, size_t> ranks_with;
  for (const RankTrace& t : traces) {
    const Events steps = eventsOf(t, TraceClass::kStep, CollectiveSource::kNone);
    out.events.push_back(eventsOf(t, TraceClass::kCollective, source));
    std::vector<CollectiveKey> keys;
    std::map<int64_t, int> in_step;
    for (const TraceEvent* c : out.events.back()) {
      const int i = stepIndexAt(steps, c->start_ns);
      const int64_t step = i < 0 ? -1 : steps[size_t(i)]->step;
      keys.emplace_back(step, in_step[step]++);
      ++ranks_with[keys.back()];
    }
    out.keys.push_back(std::move(keys));
  }
  for (const auto& [key, ranks] : ranks_with) {
    out.part.emplace(key, int(out.part.size()));
    if (ranks == traces.size()) out.on_every_rank.push_back(key);
  }
  return out;
}

// One rank's view of the run while its rows are made.
struct RankContext {
  const RankTrace& trace;
  int rank;        // as stored
  int64_t offset;  // onto rank 0's clock
  int64_t origin;  // the run's zero, on rank 0's clock
  Events steps;
  const Events& collectives;               // the chosen source, by start
  const std::vector<CollectiveKey>& keys;  // theirs
  const KeyedCollectives& run;
  const std::map<CollectiveKey, int64_t>& last_arrival;  // on rank 0's clock
  int64_t at(int64_t ns) const { return ns + offset - origin; }
};

// Where a step's time went, as the boundaries that cut [start, end] into its phases.
struct StepCut {
  int64_t data_end, bwd_start, bwd_end, comm_end;
  int64_t hidden = 0, wait = 0;
};

// The first start at or after `from` among events of `kind` in the step, else `fallback`.
int64_t firstStart(const Events& in_step, TraceClass kind, int64_t from, int64_t fallback) {
  for (const TraceEvent* e : in_step)
    if (e->kind == kind && e->start_ns >= from) return std::min(e->start_ns, fallback);
  return fallback;
}

StepCut cutStep(const TraceEvent& step, const Events& in_step) {
  const int64_t s = step.start_ns, e = step.end_ns;
  StepCut c{s, std::numeric_limits<int64_t>::max(), s, s};
  for (const TraceEvent* x : in_step)
    if (x->kind == TraceClass::kData) c.data_end = std::max(c.data_end, std::min(x->end_ns, e));
  c.bwd_end = c.data_end;
  for (const TraceEvent* x : in_step) {
    if (x->kind != TraceClass::kBackward) continue;
    c.bwd_start = std::min(c.bwd_start, std::max(x->start_ns, c.data_end));
    c.bwd_end = std::max(c.bwd_end, std::min(x->end_ns, e));
  }
  if (c.bwd_start == std::numeric_limits<int64_t>::max()) {  // no backward: up to what follows
    c.bwd_start = firstStart(in_step, TraceClass::kOptimizer, c.data_end, e);
    c.bwd_start = firstStart(in_step, TraceClass::kCollective, c.data_end, c.bwd_start);
    c.bwd_end = c.bwd_start;
  }
  const int64_t opt_start = firstStart(in_step, TraceClass::kOptimizer, c.bwd_end, e);
  c.comm_end = c.bwd_end;
  for (const TraceEvent* x : in_step)
    if (x->kind == TraceClass::kCollective) c.comm_end = std::max(c.comm_end, x->end_ns);
  c.comm_end = std::clamp(c.comm_end, c.bwd_end, opt_start);
  return c;
}

void countCollective(StepRow& row, const TraceEvent& c) {
  const std::string op = kCollectiveSpanKinds[c.op];
  row.allreduces += op == "all_reduce";
  row.all_gathers += op == "all_gather";
  row.reduce_scatters += op == "reduce_scatter";
  row.sends += op == "send";
  row.recvs += op == "recv";
  row.bytes_tx = saturatingAdd(row.bytes_tx, c.bytes);  // the run's sums are bounded later
  row.bytes_raw = row.bytes_tx;
}

StepRow stepRow(const RankContext& ctx, const TraceEvent& step, const Events& in_step,
                const std::vector<int>& matched) {
  StepCut cut = cutStep(step, in_step);
  const int64_t exposed = cut.comm_end - cut.bwd_end;
  // Collectives that run at once each overlap the backward (or the exposed time); counted
  // past the window's own length they would be time that never passed, and could wrap.
  const int64_t backward = cut.bwd_end - cut.bwd_start;
  StepRow row;
  row.rank = ctx.rank;
  row.step = step.step;
  row.time_ns = ctx.at(step.end_ns);
  for (size_t i = 0; i < in_step.size(); ++i) {
    const TraceEvent& c = *in_step[i];
    if (c.kind != TraceClass::kCollective) continue;
    countCollective(row, c);
    cut.hidden =
        std::min(backward, cut.hidden + overlap(c.start_ns, c.end_ns, cut.bwd_start, cut.bwd_end));
    if (matched[i] < 0) continue;
    const auto arrived = ctx.last_arrival.find(ctx.keys[size_t(matched[i])]);
    if (arrived == ctx.last_arrival.end()) continue;  // not every rank's trace has it
    // Before the last rank arrived this rank was waiting, not moving bytes.
    const int64_t last = arrived->second - ctx.offset;
    cut.wait = std::min(exposed, cut.wait + overlap(cut.bwd_end, cut.comm_end, c.start_ns, last));
  }
  row.data_ns = cut.data_end - step.start_ns;
  row.forward_ns = cut.bwd_start - cut.data_end;
  row.backward_ns = cut.bwd_end - cut.bwd_start;
  row.wait_ns = cut.wait;
  row.comm_ns = exposed - cut.wait + cut.hidden;
  row.comm_hidden_ns = cut.hidden;
  row.update_ns = step.end_ns - cut.comm_end;
  return row;
}

SpanRow span(const RankContext& ctx, const TraceEvent& e, std::string kind) {
  SpanRow row;
  row.rank = ctx.rank;
  const int index = stepIndexAt(ctx.steps, e.start_ns);
  row.step = index < 0 ? 0 : ctx.steps[size_t(index)]->step;
  row.kind = std::move(kind);
  row.start_ns = ctx.at(e.start_ns);
  row.end_ns = ctx.at(e.end_ns);
  row.bytes = e.bytes;
  return row;
}

bool insideAStep(const Events& steps, const TraceEvent& e) {
  const int i = stepIndexAt(steps, e.start_ns);
  return i >= 0 && e.start_ns < steps[size_t(i)]->end_ns;
}

// Events outside every step, the outermost on each thread only, as "other:<name>" spans.
void keepUnmapped(const RankContext& ctx, RunRowSink& sink, ImportedCounts& out) {
  Events outside;
  for (const TraceEvent& e : ctx.trace.events)
    if (e.kind == TraceClass::kOther && !insideAStep(ctx.steps, e)) outside.push_back(&e);
  std::sort(outside.begin(), outside.end(), [](const TraceEvent* a, const TraceEvent* b) {
    return a->thread != b->thread       ? a->thread < b->thread
           : a->start_ns != b->start_ns ? a->start_ns < b->start_ns
           : a->end_ns != b->end_ns     ? a->end_ns > b->end_ns
                                        : std::less<>()(a, b);
  });
  int32_t thread = -1;
  int64_t covered = 0;
  for (const TraceEvent* e : outside) {
    if (e->thread == thread && e->start_ns < covered) continue;  // nested in the last kept
    thread = e->thread;
    covered = e->end_ns;
    sink.add(span(ctx, *e, "other:" + ctx.trace.names[size_t(e->name)].substr(0, 120)));
    ++out.kept_other;
  }
}

// Each of a step's collectives as its place in the rank's list (-1: not a collective).
std::vector<int> matchedIndices(const RankContext& ctx, const Events& in_step) {
  std::vector<int> matched(in_step.size(), -1);
  for (size_t i = 0; i < in_step.size(); ++i) {
    if (in_step[i]->kind != TraceClass::kCollective) continue;
    const auto it =
        std::lower_bound(ctx.collectives.begin(), ctx.collectives.end(), in_step[i], byStart);
    if (it != ctx.collectives.end() && *it == in_step[i])
      matched[i] = int(it - ctx.collectives.begin());
  }
  return matched;
}

// Each event belongs to the last step started at or before it (as each span does) and only
// if it starts before that step ends: a contiguous run of `timed` per step, so overlapping
// steps share nothing and the work stays linear in the events.
void stepRows(const RankContext& ctx, RunRowSink& sink) {
  Events timed = ctx.collectives;  // what cuts a step, in start order
  for (const TraceEvent& e : ctx.trace.events)
    if (e.kind == TraceClass::kData || e.kind == TraceClass::kBackward ||
        e.kind == TraceClass::kOptimizer)
      timed.push_back(&e);
  std::sort(timed.begin(), timed.end(), byStart);
  for (size_t i = 0; i < ctx.steps.size(); ++i) {
    const TraceEvent& step = *ctx.steps[i];
    int64_t until = step.end_ns;
    if (i + 1 < ctx.steps.size()) until = std::min(until, ctx.steps[i + 1]->start_ns);
    const auto first = firstFrom(timed, timed.begin(), step.start_ns);
    const Events in_step(first, std::max(first, firstFrom(timed, first, until)));
    sink.add(stepRow(ctx, step, in_step, matchedIndices(ctx, in_step)));
  }
}

void spanRows(const RankContext& ctx, RunRowSink& sink, ImportedCounts& out) {
  for (size_t k = 0; k < ctx.collectives.size(); ++k) {
    const TraceEvent& c = *ctx.collectives[k];
    SpanRow row = span(ctx, c, kCollectiveSpanKinds[c.op]);
    row.part = ctx.run.part.at(ctx.keys[k]);  // the same number on every rank
    sink.add(row);
    ++out.collectives;
    out.collectives_with_bytes += c.bytes > 0;
  }
  for (const TraceEvent& e : ctx.trace.events) {
    if (e.kind != TraceClass::kKernel && e.kind != TraceClass::kMemcpy) continue;
    sink.add(span(ctx, e, e.kind == TraceClass::kKernel ? "dev-kernel" : "dev-memcpy"));
    ++out.device_pieces;
  }
  keepUnmapped(ctx, sink, out);
}

}  // namespace

CollectiveSource commonCollectiveSource(const std::vector<RankTrace>& traces) {
  CollectiveSource common = CollectiveSource::kNcclKernel;
  for (const RankTrace& t : traces) {
    CollectiveSource best = CollectiveSource::kNone;
    for (const TraceEvent& e : t.events) best = std::max(best, e.source);
    common = std::min(common, best);
  }
  return traces.empty() ? CollectiveSource::kNone : common;
}

void lendSizes(std::vector<RankTrace>& traces) {
  const CollectiveSource source = commonCollectiveSource(traces);
  if (source == CollectiveSource::kParamComms || source == CollectiveSource::kNone) return;
  for (RankTrace& t : traces) {
    std::map<int, std::vector<TraceEvent*>> chosen, sized;  // op: by start
    for (TraceEvent& e : t.events) {
      if (e.source == source) chosen[e.op].push_back(&e);
      if (e.source == CollectiveSource::kParamComms && e.bytes > 0) sized[e.op].push_back(&e);
    }
    for (auto& [op, events] : chosen) {
      auto& sizes = sized[op];
      if (sizes.size() != events.size()) continue;  // not one to one: no sizes rather than wrong
      auto by_start = [](const TraceEvent* a, const TraceEvent* b) {
        return a->start_ns < b->start_ns;
      };
      std::sort(events.begin(), events.end(), by_start);
      std::sort(sizes.begin(), sizes.end(), by_start);
      for (size_t i = 0; i < events.size(); ++i)
        if (events[i]->bytes == 0) events[i]->bytes = sizes[i]->bytes;
    }
  }
}

ClockAlignment alignClocks(const std::vector<RankTrace>& traces) {
  ClockAlignment out;
  out.offset_ns.assign(traces.size(), 0);
  const KeyedCollectives run = keyedCollectives(traces);
  if (traces.size() < 2 || run.on_every_rank.empty()) return out;
  // Each rank's end of each key, on its own clock.
  std::vector<std::map<CollectiveKey, int64_t>> ends(traces.size());
  for (size_t r = 0; r < traces.size(); ++r)
    for (size_t k = 0; k < run.events[r].size(); ++k)
      ends[r][run.keys[r][k]] = run.events[r][k]->end_ns;
  for (size_t r = 1; r < traces.size(); ++r) {
    std::vector<int64_t> gaps;
    for (const CollectiveKey& key : run.on_every_rank) gaps.push_back(ends[0][key] - ends[r][key]);
    out.offset_ns[r] = median(gaps);
  }
  out.collectives = int(run.on_every_rank.size());
  for (const CollectiveKey& key : run.on_every_rank) {
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (size_t r = 0; r < traces.size(); ++r) {
      lo = std::min(lo, ends[r][key] + out.offset_ns[r]);
      hi = std::max(hi, ends[r][key] + out.offset_ns[r]);
    }
    out.spread_ns = std::max(out.spread_ns, hi - lo);
  }
  return out;
}

ImportedCounts traceRows(const std::vector<RankTrace>& traces, const std::vector<int>& ranks,
                         const ClockAlignment& clocks, RunRowSink& sink) {
  const KeyedCollectives run = keyedCollectives(traces);
  std::map<CollectiveKey, int64_t> last_arrival;
  for (const CollectiveKey& key : run.on_every_rank)
    last_arrival[key] = std::numeric_limits<int64_t>::min();
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (size_t r = 0; r < traces.size(); ++r) {
    for (size_t k = 0; k < run.events[r].size(); ++k) {
      const auto it = last_arrival.find(run.keys[r][k]);
      if (it != last_arrival.end())
        it->second = std::max(it->second, run.events[r][k]->start_ns + clocks.offset_ns[r]);
    }
    for (const TraceEvent& e : traces[r].events)
      origin = std::min(origin, e.start_ns + clocks.offset_ns[r]);
  }
  ImportedCounts out;
  for (size_t r = 0; r < traces.size(); ++r) {
    const RankContext ctx{traces[r],
                          ranks[r],
                          clocks.offset_ns[r],
                          origin,
                          eventsOf(traces[r], TraceClass::kStep, CollectiveSource::kNone),
                          run.events[r],
                          run.keys[r],
                          run,
                          last_arrival};
    stepRows(ctx, sink);
    spanRows(ctx, sink, out);
  }
  return out;
}

}  // namespace ranklab
