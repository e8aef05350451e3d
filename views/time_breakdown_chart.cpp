#include "views/time_breakdown_chart.h"

#include <QChart>

#include "views/models/live_run_model.h"
#include "views/models/rank_colour.h"

namespace ranklab {

namespace {

std::vector<RankBarsChart::Part> phaseParts() {
  std::vector<RankBarsChart::Part> parts;
  for (int p = 0; p < kPhaseCount; ++p)
    parts.push_back({QString::fromLatin1(phaseName(p)), phaseColour(p)});
  return parts;
}

}  // namespace

TimeBreakdownChart::TimeBreakdownChart(QWidget* parent)
    : RankBarsChart(tr("Time per step by phase"), tr("ms per step"), phaseParts(), parent) {}

void TimeBreakdownChart::refresh(const LiveRunModel& model) {
  const RunSeries& run = model.series();
  chart()->setTitle(
      run.finished()
          ? tr("Time per step by phase (mean over the run)")
          : tr("Time per step by phase (mean of the last %1 steps)").arg(RunSeries::kRecentSteps));
  std::vector<int> ranks;
  std::vector<std::vector<double>> values;
  for (int row : model.trainingRows()) {
    ranks.push_back(model.rankAt(row).rank);
    const auto ms = run.phaseMeansMs(row);
    values.emplace_back(ms.begin(), ms.end());
  }
  setBars(ranks, values);
}

}  // namespace ranklab
