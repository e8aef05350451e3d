// What each rank keeps for its backward, layer by layer (its "activations" event, after the
// warm-up): one stacked bar per rank, a segment per layer in MB, a GPT's blocks in shades of
// one colour. Where a transformer's memory goes: its blocks (their attention growing as the
// context squared), and the pipeline stage that holds 1F1B's most micro-batches.
#pragma once

#include <QStringList>

#include "views/rank_bars_chart.h"

namespace ranklab {

class LiveRunModel;

class ActivationsChart : public RankBarsChart {
  Q_OBJECT

 public:
  explicit ActivationsChart(QWidget* parent = nullptr);
  // False while no rank has reported its ledger (nothing to draw).
  bool refresh(const LiveRunModel& model);
  const QStringList& layers() const { return layers_; }  // the segments, in order

 private:
  QStringList layers_;
};

}  // namespace ranklab
