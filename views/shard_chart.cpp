#include "views/shard_chart.h"

#include <algorithm>

#include "views/models/live_run_model.h"

namespace ranklab {

ShardChart::ShardChart(QWidget* parent)
    : RankBarsChart(tr("Parameter server shards (share of the run)"), tr("% of the time"),
                    {{tr("busy applying updates"), QColor(0xc6, 0x28, 0x28)},
                     {tr("receiving and replying"), QColor(0xff, 0x7f, 0x0e)},
                     {tr("idle, waiting for requests"), QColor(0xb0, 0xbe, 0xc5)}},
                    parent) {}

QString ShardChart::describe(const ShardLoad& s) {
  const double seconds = double(s.interval_ns) / 1e9;
  const double per_s = seconds > 0 ? 1.0 / seconds : 0;
  return tr("shard %1 · rank %2 · %3 pushes/s · held %4 ms/s · ≤ %5 versions behind")
      .arg(s.shard)
      .arg(s.rank)
      .arg(double(s.pushes) * per_s, 0, 'f', 0)
      .arg(double(s.held_ns) / 1e6 * per_s, 0, 'f', 1)
      .arg(s.max_staleness);
}

void ShardChart::refresh(const LiveRunModel& model) {
  std::vector<int> ranks;
  std::vector<std::vector<double>> values;
  QStringList names;
  for (const ShardLoad& s : model.series().shards()) {
    const double interval = double(std::max<int64_t>(1, s.interval_ns));
    ranks.push_back(s.rank);
    const double busy = 100.0 * double(s.busy_ns) / interval;
    const double idle = 100.0 * double(s.idle_ns) / interval;
    values.push_back({busy, std::max(0.0, 100.0 - busy - idle), idle});
    names << describe(s);
  }
  setBars(ranks, values, names);
}

}  // namespace ranklab
