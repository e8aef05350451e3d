#include "views/models/timeline_data.h"

#include <QObject>
#include <algorithm>
#include <limits>
#include <map>

#include "views/models/run_series.h"

namespace ranklab {

namespace {

// When, on its own clock, the rank left the barrier of this step: its wait ended there.
double barrierExitMs(const StepRow& s) {
  return double(s.time_ns - s.update_ns - s.comm_ns) / 1e6;
}

}  // namespace

TimelineData buildTimeline(int64_t run_id, const std::vector<StepRow>& steps, bool align,
                           const std::vector<SpanRow>& spans) {
  TimelineData data;
  data.run_id = run_id;
  if (steps.empty()) return data;
  data.first_step = std::numeric_limits<int64_t>::max();
  data.last_step = std::numeric_limits<int64_t>::min();
  std::map<int, std::map<int64_t, const StepRow*>> by_rank;
  for (const StepRow& s : steps) {
    by_rank[s.rank][s.step] = &s;
    data.first_step = std::min(data.first_step, s.step);
    data.last_step = std::max(data.last_step, s.step);
  }
  for (const auto& [rank, rows] : by_rank) data.ranks.push_back(rank);

  // Offsets that put every rank's barrier exit of the first common step at the same time.
  std::map<int, double> offset;
  for (int rank : data.ranks) offset[rank] = 0;
  if (align && data.ranks.size() > 1) {
    for (int64_t step = data.first_step; step <= data.last_step; ++step) {
      const bool everyone = std::all_of(by_rank.begin(), by_rank.end(),
                                        [step](const auto& r) { return r.second.count(step); });
      if (!everyone) continue;
      const double reference = barrierExitMs(*by_rank.begin()->second.at(step));
      for (auto& [rank, rows] : by_rank) offset[rank] = reference - barrierExitMs(*rows.at(step));
      data.aligned_at_step = step;
      break;
    }
  }

  double begin = std::numeric_limits<double>::max(), end = std::numeric_limits<double>::lowest();
  for (const auto& [rank, rows] : by_rank) {
    for (const auto& [step, s] : rows) {
      const PhaseTimes phases = phaseTimes(*s);
      double t = double(s->time_ns) / 1e6 + offset[rank];
      std::vector<TimelineBar> bars;
      for (int p = kPhaseCount - 1; p >= 0; --p) {  // back from the step's end
        const double length = double(phases[size_t(p)]) / 1e6;
        if (length <= 0) continue;
        bars.push_back({rank, step, p, t - length, t});
        t -= length;
      }
      std::reverse(bars.begin(), bars.end());
      for (const TimelineBar& bar : bars) {
        begin = std::min(begin, bar.start_ms);
        end = std::max(end, bar.end_ms);
        data.bars.push_back(bar);
      }
    }
  }
  for (const SpanRow& s : spans) {
    if (!by_rank.count(s.rank)) continue;
    data.spans.push_back({s.rank, s.step, QString::fromStdString(s.kind),
                          double(s.start_ns) / 1e6 + offset[s.rank],
                          double(s.end_ns) / 1e6 + offset[s.rank]});
    end = std::max(end, data.spans.back().end_ms);
  }
  // Times shown from the start of the window.
  for (TimelineBar& bar : data.bars) {
    bar.start_ms -= begin;
    bar.end_ms -= begin;
  }
  for (TimelineSpan& span : data.spans) {
    span.start_ms = std::max(0.0, span.start_ms - begin);
    span.end_ms -= begin;
  }
  data.begin_ms = 0;
  data.end_ms = data.bars.empty() ? 0 : end - begin;
  return data;
}

QString describeBar(const TimelineBar& bar) {
  return QObject::tr("rank %1 · step %2 · %3 %4 ms (%5 → %6 ms)")
      .arg(bar.rank)
      .arg(bar.step)
      .arg(QString::fromLatin1(phaseName(bar.phase)))
      .arg(bar.end_ms - bar.start_ms, 0, 'f', 2)
      .arg(bar.start_ms, 0, 'f', 2)
      .arg(bar.end_ms, 0, 'f', 2);
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

}  // namespace ranklab
