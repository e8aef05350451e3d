#include "views/rank_breakdown_chart.h"

#include "views/models/rank_colour.h"

namespace ranklab {

namespace {

// The step phases' colours for the kinds they make up (compute as backward's); idle grey.
std::vector<RankBarsChart::Part> kinds() {
  return {{QObject::tr("compute"), phaseColour(2)},
          {QObject::tr("comm (exposed)"), phaseColour(5)},
          {QObject::tr("wait for last rank"), phaseColour(4)},
          {QObject::tr("data"), phaseColour(0)},
          {QObject::tr("idle"), QColor(0xbd, 0xbd, 0xbd)}};
}

}  // namespace

RankBreakdownChart::RankBreakdownChart(QWidget* parent)
    : RankBarsChart(tr("Where each rank's time went"), tr("seconds over the run"), kinds(),
                    parent) {}

void RankBreakdownChart::setBreakdown(const std::vector<RankBreakdown>& ranks) {
  std::vector<int> rank_ids;
  std::vector<std::vector<double>> values;
  for (const RankBreakdown& b : ranks) {
    rank_ids.push_back(b.rank);
    values.push_back({b.compute_s, b.comm_s, b.wait_s, b.data_s, b.idle_s});
  }
  setBars(rank_ids, values);
}

}  // namespace ranklab
