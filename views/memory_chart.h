// What each rank holds, from the latest step's memory ledger: one stacked bar per rank with
// parameters, gradients, optimizer state, activations kept for backward (a pipeline's copies
// of its stage each their own; the activations chart splits them per layer) and one layer's
// scratch in MB.
// ZeRO shrinks the first three (and needs the scratch), pipeline and tensor parallelism all.
#pragma once

#include "views/rank_bars_chart.h"

namespace ranklab {

class LiveRunModel;

class MemoryChart : public RankBarsChart {
  Q_OBJECT

 public:
  enum Part { Params, Grads, Optimizer, Activations, Buffers, PartCount };
  explicit MemoryChart(QWidget* parent = nullptr);

  void refresh(const LiveRunModel& model);
};

}  // namespace ranklab
