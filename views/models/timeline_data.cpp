#include "views/models/timeline_data.h"

#include <QLocale>
#include <QObject>
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "views/models/run_series.h"

namespace ranklab {

namespace {

// When, on its own clock, the rank left the barrier of this step: its wait ended there.
double barrierExitMs(const StepRow& s) {
  return double(s.time_ns - s.update_ns - s.comm_ns) / 1e6;
}

// A pipeline pass read back from its span ("F3", "B12"): nothing for any other span.
struct PassBar {
  int phase = forwardPhase;
  int micro = 0;
  int64_t start_ns = 0, end_ns = 0;
};

std::optional<PassBar> passOf(const SpanRow& span) {
  const std::string& k = span.kind;
  if (k.size() < 2 || (k[0] != 'F' && k[0] != 'B')) return std::nullopt;
  if (!std::all_of(k.begin() + 1, k.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return PassBar{k[0] == 'F' ? forwardPhase : backwardPhase, std::stoi(k.substr(1)), span.start_ns,
                 span.end_ns};
}

// Phase `phase` of step `s` over [from, to): one bar, or the communication split by group:
// the tensor slices' share, the pipeline's, then the data group's.
void addPhase(std::vector<TimelineBar>& bars, const StepRow& s, int phase, double from, double to) {
  if (to <= from) return;
  if (phase != commPhase) {
    bars.push_back({s.rank, s.step, phase, from, to});
    return;
  }
  const std::pair<CommGroup, int64_t> shares[] = {{CommGroup::kTensor, s.comm_tensor_ns},
                                                  {CommGroup::kPipeline, s.comm_pipeline_ns}};
  for (const auto& [group, ns] : shares) {
    const double end = std::min(to, from + double(ns) / 1e6);
    if (end > from) bars.push_back({s.rank, s.step, phase, from, end, -1, group});
    from = std::max(from, end);
  }
  if (to > from) bars.push_back({s.rank, s.step, phase, from, to, -1, CommGroup::kData});
}

// A step's phases back from its end, in the trainer's order.
std::vector<TimelineBar> stepBars(const StepRow& s, double offset) {
  const PhaseTimes phases = phaseTimes(s);
  double all = 0;
  for (int p = 0; p < kPhaseCount; ++p) all += double(phases[size_t(p)]) / 1e6;
  double t = double(s.time_ns) / 1e6 + offset - all;
  std::vector<TimelineBar> bars;
  for (int p = 0; p < kPhaseCount; ++p) {
    const double length = double(phases[size_t(p)]) / 1e6;
    addPhase(bars, s, p, t, t + length);
    t += length;
  }
  return bars;
}

// A pipeline step: data first, then each pass where it ran with the gaps before and after
// as wait, then the phases after the passes (sync, update) back from the step's end.
// The phases a pipeline step draws after its passes (sync, update): not data, which comes
// first, nor forward, backward and wait, which the passes and their gaps show.
bool afterPasses(int phase) {
  return phase != dataPhase && phase != forwardPhase && phase != backwardPhase &&
         phase != waitPhase;
}

std::vector<TimelineBar> pipelineStepBars(const StepRow& s, double offset,
                                          std::vector<PassBar> passes) {
  std::sort(passes.begin(), passes.end(),
            [](const PassBar& a, const PassBar& b) { return a.start_ns < b.start_ns; });
  const PhaseTimes phases = phaseTimes(s);
  const double end = double(s.time_ns) / 1e6 + offset;
  double all = 0, tail = 0;
  for (int p = 0; p < kPhaseCount; ++p) {
    all += double(phases[size_t(p)]) / 1e6;
    if (afterPasses(p)) tail += double(phases[size_t(p)]) / 1e6;
  }
  std::vector<TimelineBar> bars;
  double cursor = end - all;
  auto add = [&](int phase, double from, double to, int micro = -1) {
    if (to > from) bars.push_back({s.rank, s.step, phase, from, to, micro});
  };
  add(dataPhase, cursor, cursor + double(phases[dataPhase]) / 1e6);
  cursor += double(phases[dataPhase]) / 1e6;
  for (const PassBar& pass : passes) {
    const double from = double(pass.start_ns) / 1e6 + offset;
    add(waitPhase, cursor, from);
    add(pass.phase, from, double(pass.end_ns) / 1e6 + offset, pass.micro);
    cursor = std::max(cursor, double(pass.end_ns) / 1e6 + offset);
  }
  add(waitPhase, cursor, end - tail);
  double t = end - tail;
  for (int p = 0; p < kPhaseCount; ++p) {
    if (!afterPasses(p)) continue;
    addPhase(bars, s, p, t, t + double(phases[size_t(p)]) / 1e6);
    t += double(phases[size_t(p)]) / 1e6;
  }
  return bars;
}

using StepsByRank = std::map<int, std::map<int64_t, const StepRow*>>;

// Offsets that put every rank's barrier exit of the first common step at the same time (all
// 0 unless align and more than one rank); data.aligned_at_step says at which step.
std::map<int, double> rankOffsets(const StepsByRank& by_rank, bool align, TimelineData& data) {
  std::map<int, double> offset;
  for (int rank : data.ranks) offset[rank] = 0;
  if (!align || data.ranks.size() < 2) return offset;
  for (int64_t step = data.first_step; step <= data.last_step; ++step) {
    const bool everyone = std::all_of(by_rank.begin(), by_rank.end(),
                                      [step](const auto& r) { return r.second.count(step); });
    if (!everyone) continue;
    const double reference = barrierExitMs(*by_rank.begin()->second.at(step));
    for (const auto& [rank, rows] : by_rank)
      offset[rank] = reference - barrierExitMs(*rows.at(step));
    data.aligned_at_step = step;
    break;
  }
  return offset;
}

// The run's events on their ranks' rows: at their own time when they have one (a restart
// rolled back the steps they happened in and trained them again later), else at the end of
// their step.
void addMarks(TimelineData& data, const StepsByRank& by_rank, std::map<int, double>& offset,
              const std::vector<EventRow>& events) {
  for (const EventRow& e : events) {
    const auto rank = by_rank.find(e.rank);
    if (!isTimelineMark(e) || rank == by_rank.end()) continue;
    const auto step = rank->second.find(e.step);
    if (step == rank->second.end()) continue;
    const int64_t at_ns = e.time_ns > 0 ? e.time_ns : step->second->time_ns;
    data.marks.push_back({e.rank, e.step, QString::fromStdString(e.kind),
                          QString::fromStdString(e.text), double(at_ns) / 1e6 + offset[e.rank]});
  }
}

// Every time shown from the start of the window, `begin` on the ranks' common axis.
void startAt(TimelineData& data, double begin) {
  for (TimelineBar& bar : data.bars) {
    bar.start_ms -= begin;
    bar.end_ms -= begin;
  }
  for (TimelineSpan& span : data.spans) {
    span.start_ms = std::max(0.0, span.start_ms - begin);
    span.end_ms -= begin;
  }
  for (TimelineHop& hop : data.hops) {
    hop.start_ms -= begin;
    hop.end_ms -= begin;
  }
  for (TimelineDevicePiece& piece : data.device) {
    piece.start_ms -= begin;
    piece.end_ms -= begin;
  }
  for (TimelineMark& mark : data.marks) mark.at_ms -= begin;
  data.begin_ms = 0;
}

}  // namespace

// Per step every rank of the window took, the last to reach the step's collective on the
// aligned clock: its bars but the wait are the critical path's (not for a pipeline's steps,
// whose stages meet at no one collective).
void markCriticalPath(TimelineData& data, const StepsByRank& by_rank,
                      const std::map<int, double>& offset) {
  // Each step's bars lie together: where they begin and end, found once, not per step.
  std::map<std::pair<int, int64_t>, std::pair<size_t, size_t>> bars_of;
  for (size_t i = 0; i < data.bars.size(); ++i) {
    auto [at, added] = bars_of.try_emplace({data.bars[i].rank, data.bars[i].step}, i, i);
    at->second.second = i + 1;
  }
  for (int64_t step = data.first_step; step <= data.last_step; ++step) {
    int last = -1;
    double latest = std::numeric_limits<double>::lowest();
    for (const auto& [rank, rows] : by_rank) {
      const auto found = rows.find(step);
      if (found == rows.end()) {
        last = -1;
        break;
      }
      const StepRow& s = *found->second;
      const int64_t exposed = s.comm_ns - std::min(s.comm_hidden_ns, s.comm_ns);
      const double arrival =
          offset.at(rank) + double(s.time_ns - s.update_ns - exposed - s.wait_ns) / 1e6;
      if (arrival > latest) latest = arrival, last = rank;
    }
    const auto bars = bars_of.find({last, step});
    if (last < 0 || bars == bars_of.end()) continue;
    for (size_t i = bars->second.first; i < bars->second.second; ++i)
      data.bars[i].on_path = data.bars[i].phase != waitPhase;
  }
}

TimelineData buildTimeline(int64_t run_id, const std::vector<StepRow>& steps, bool align,
                           const std::vector<SpanRow>& spans, const std::vector<EventRow>& events) {
  TimelineData data;
  data.run_id = run_id;
  if (steps.empty()) return data;
  data.first_step = std::numeric_limits<int64_t>::max();
  data.last_step = std::numeric_limits<int64_t>::min();
  StepsByRank by_rank;
  for (const StepRow& s : steps) {
    by_rank[s.rank][s.step] = &s;
    data.first_step = std::min(data.first_step, s.step);
    data.last_step = std::max(data.last_step, s.step);
  }
  for (const auto& [rank, rows] : by_rank) data.ranks.push_back(rank);

  std::map<int, double> offset = rankOffsets(by_rank, align, data);

  // A pipeline's passes by rank and step; other spans stay spans.
  std::map<std::pair<int, int64_t>, std::vector<PassBar>> passes;
  std::vector<const SpanRow*> others, pieces, device;
  for (const SpanRow& s : spans) {
    if (!by_rank.count(s.rank)) continue;
    if (isCommSpan(s))
      pieces.push_back(&s);
    else if (isDeviceSpan(s))
      device.push_back(&s);
    else if (const auto pass = passOf(s))
      passes[{s.rank, s.step}].push_back(*pass);
    else
      others.push_back(&s);
  }
  double begin = std::numeric_limits<double>::max(), end = std::numeric_limits<double>::lowest();
  for (const auto& [rank, rows] : by_rank) {
    for (const auto& [step, s] : rows) {
      const auto found = passes.find({rank, step});
      const std::vector<TimelineBar> bars = found == passes.end()
                                                ? stepBars(*s, offset[rank])
                                                : pipelineStepBars(*s, offset[rank], found->second);
      for (const TimelineBar& bar : bars) {
        begin = std::min(begin, bar.start_ms);
        end = std::max(end, bar.end_ms);
        data.bars.push_back(bar);
      }
    }
  }
  if (align && passes.empty() && by_rank.size() > 1) markCriticalPath(data, by_rank, offset);
  std::map<std::string, QString> kinds;  // a million spans share a few kinds: one text each
  const auto kindOf = [&kinds](const std::string& kind) {
    auto [at, added] = kinds.try_emplace(kind);
    if (added) at->second = QString::fromStdString(kind);
    return at->second;
  };
  data.spans.reserve(others.size());
  for (const SpanRow* s : others) {
    data.spans.push_back({s->rank, s->step, kindOf(s->kind),
                          double(s->start_ns) / 1e6 + offset[s->rank],
                          double(s->end_ns) / 1e6 + offset[s->rank]});
    end = std::max(end, data.spans.back().end_ms);
  }
  for (const SpanRow* s : pieces) {
    data.hops.push_back({s->rank, s->step, QString::fromStdString(s->kind), s->part, s->peer,
                         s->chunk, s->bytes, double(s->start_ns) / 1e6 + offset[s->rank],
                         double(s->end_ns) / 1e6 + offset[s->rank]});
  }
  for (const SpanRow* s : device) {
    data.device.push_back({s->rank, s->step, QString::fromStdString(s->kind), s->part,
                           double(s->start_ns) / 1e6 + offset[s->rank],
                           double(s->end_ns) / 1e6 + offset[s->rank]});
  }
  data.spans_total = int64_t(data.spans.size());
  addMarks(data, by_rank, offset, events);
  startAt(data, begin);
  data.end_ms = data.bars.empty() ? 0 : end - begin;
  return data;
}

std::vector<TimelineSpan> capSpans(const std::vector<TimelineSpan>& spans, const SpanCap& cap) {
  std::map<int, std::vector<size_t>> in_view;  // by rank: the spans reaching into the range
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i].end_ms >= cap.from_ms && spans[i].start_ms <= cap.to_ms)
      in_view[spans[i].rank].push_back(i);
  const int rows = std::max<int>(1, int(in_view.size()));
  const size_t per_rank = size_t(std::max(1, std::min(cap.per_rank, cap.total / rows)));
  const auto longer = [&spans](size_t a, size_t b) {
    return spans[a].end_ms - spans[a].start_ms > spans[b].end_ms - spans[b].start_ms;
  };
  std::vector<size_t> kept;
  for (auto& [rank, of_rank] : in_view) {
    if (of_rank.size() > per_rank) {
      std::nth_element(of_rank.begin(), of_rank.begin() + std::ptrdiff_t(per_rank), of_rank.end(),
                       longer);
      of_rank.resize(per_rank);
    }
    kept.insert(kept.end(), of_rank.begin(), of_rank.end());
  }
  std::sort(kept.begin(), kept.end());  // back in the order they were laid out
  std::vector<TimelineSpan> out;
  out.reserve(kept.size());
  for (size_t i : kept) out.push_back(spans[i]);
  return out;
}

QString spanCapText(const TimelineData& data) {
  if (!data.spansLeftOut()) return {};
  return QObject::tr(
             "showing %1 of %2 spans (the longest of each rank in view): zoom in to see "
             "the rest")
      .arg(QLocale().toString(qlonglong(data.spans.size())))
      .arg(QLocale().toString(qlonglong(data.spans_total)));
}

QString describeBar(const TimelineBar& bar) {
  QString phase = QString::fromLatin1(phaseName(bar.phase));
  if (bar.micro >= 0) phase += QObject::tr(" of micro-batch %1").arg(bar.micro);
  if (bar.phase == commPhase && bar.group == CommGroup::kTensor)
    phase += QObject::tr(" (tensor group: f and g, inside forward and backward)");
  if (bar.phase == commPhase && bar.group == CommGroup::kPipeline)
    phase += QObject::tr(" (pipeline group: the token table)");
  return QObject::tr("rank %1 · step %2 · %3 %4 ms (%5 → %6 ms)%7")
      .arg(bar.rank)
      .arg(bar.step)
      .arg(phase)
      .arg(bar.end_ms - bar.start_ms, 0, 'f', 2)
      .arg(bar.start_ms, 0, 'f', 2)
      .arg(bar.end_ms, 0, 'f', 2)
      .arg(bar.on_path ? QObject::tr(" · on the critical path: the others waited for it")
                       : QString());
}

QString describeSpan(const TimelineSpan& span) {
  return QObject::tr("rank %1 · %2 after step %3 · %4 ms (%5 → %6 ms)")
      .arg(span.rank)
      .arg(span.kind)
      .arg(span.step)
      .arg(span.end_ms - span.start_ms, 0, 'f', 2)
      .arg(span.start_ms, 0, 'f', 2)
      .arg(span.end_ms, 0, 'f', 2);
}

QString describeHop(const TimelineHop& hop) {
  QString what;
  if (hop.kind == "bucket")
    what = QObject::tr("bucket %1 all-reduced").arg(hop.part);
  else if (hop.kind == "ps-push")
    what = QObject::tr("push to shard %1 (rank %2)").arg(hop.part).arg(hop.peer);
  else if (hop.kind == "ps-reply")
    what = QObject::tr("reply from shard %1 (rank %2)").arg(hop.part).arg(hop.peer);
  else
    what =
        QObject::tr("ring hop %1, %2: chunk %3 to rank %4")
            .arg(hop.part)
            .arg(hop.kind == "ring-rs" ? QObject::tr("reduce-scatter") : QObject::tr("all-gather"))
            .arg(hop.chunk)
            .arg(hop.peer);
  return QObject::tr("rank %1 · step %2 · %3, %4 KB in %5 ms")
      .arg(hop.rank)
      .arg(hop.step)
      .arg(what)
      .arg(double(hop.bytes) / 1024.0, 0, 'f', 1)
      .arg(hop.end_ms - hop.start_ms, 0, 'f', 3);
}

namespace {

QString deviceWork(const TimelineDevicePiece& piece) {
  if (piece.kind == "dev-fwd") return QObject::tr("layer %1 forward").arg(piece.layer);
  if (piece.kind == "dev-bwd") return QObject::tr("layer %1 backward").arg(piece.layer);
  if (piece.kind == "dev-loss") return QObject::tr("the loss head");
  if (piece.kind == "dev-input") return QObject::tr("the batch's copy");
  if (piece.kind == "dev-update") return QObject::tr("the optimizer's update");
  return piece.kind;
}

}  // namespace

QString describeDevicePiece(const TimelineData& data, const TimelineDevicePiece& piece) {
  double busy = 0, first = piece.start_ms, last = piece.end_ms;
  for (const TimelineDevicePiece& other : data.device) {
    if (other.rank != piece.rank || other.step != piece.step) continue;
    busy += other.end_ms - other.start_ms;
    first = std::min(first, other.start_ms);
    last = std::max(last, other.end_ms);
  }
  const double window = last - first;
  return QObject::tr(
             "rank %1 · step %2 · %3 on the device: %4 ms; the device was busy %5 of the "
             "%6 ms from its first piece to its last in this step (%7 %), idle in the gaps")
      .arg(piece.rank)
      .arg(piece.step)
      .arg(deviceWork(piece))
      .arg(piece.end_ms - piece.start_ms, 0, 'f', 3)
      .arg(busy, 0, 'f', 2)
      .arg(window, 0, 'f', 2)
      .arg(window > 0 ? 100.0 * busy / window : 100.0, 0, 'f', 0);
}

QString describeMark(const TimelineMark& mark) {
  return QObject::tr("rank %1 · %2 after step %3: %4")
      .arg(mark.rank)
      .arg(mark.kind)
      .arg(mark.step)
      .arg(mark.text);
}

std::vector<double> ownWorkMs(const TimelineData& data) {
  std::vector<double> own(data.ranks.size(), 0.0);
  for (const TimelineBar& bar : data.bars) {
    if (bar.phase == waitPhase) continue;
    const auto row = std::lower_bound(data.ranks.begin(), data.ranks.end(), bar.rank);
    if (row != data.ranks.end() && *row == bar.rank)
      own[size_t(row - data.ranks.begin())] += bar.end_ms - bar.start_ms;
  }
  return own;
}

}  // namespace ranklab
