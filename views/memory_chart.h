// What each rank holds, from the latest step's memory ledger: one stacked bar per rank with
// parameters, gradients, optimizer state and stashed activations in MB. ZeRO shrinks the
// first three, pipeline and tensor parallelism all of them.
#pragma once

#include "views/rank_bars_chart.h"

namespace ranklab {

class LiveRunModel;

class MemoryChart : public RankBarsChart {
  Q_OBJECT

 public:
  enum Part { Params, Grads, Optimizer, Activations, PartCount };
  explicit MemoryChart(QWidget* parent = nullptr);

  void refresh(const LiveRunModel& model);
};

}  // namespace ranklab
