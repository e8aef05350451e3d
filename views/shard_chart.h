// The parameter servers' load: one bar per shard with the share of the run its server
// spent applying updates (busy), receiving pushes and sending replies, and waiting for
// requests (idle), each named with its rank,
// pushes per second, the time it held replies back and the largest staleness it saw. The
// busiest shard is the bottleneck a sharded parameter server tries to avoid.
#pragma once

#include "views/rank_bars_chart.h"

namespace ranklab {

class LiveRunModel;
struct ShardLoad;

class ShardChart : public RankBarsChart {
  Q_OBJECT

 public:
  enum Part { Busy, Moving, Idle, PartCount };
  explicit ShardChart(QWidget* parent = nullptr);

  void refresh(const LiveRunModel& model);
  // "shard 1 · rank 5 · 812 pushes/s · held 3.2 ms/s · staleness ≤ 3"
  static QString describe(const ShardLoad& shard);
};

}  // namespace ranklab
