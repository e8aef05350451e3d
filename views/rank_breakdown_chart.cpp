#include "views/rank_breakdown_chart.h"

#include "views/models/breakdown_spread.h"
#include "views/models/rank_colour.h"

namespace ranklab {

// The step phases' colours for the kinds they make up (compute as backward's); idle grey.
std::vector<RankBarsChart::Part> RankBreakdownChart::kinds() {
  return {{QObject::tr("compute"), phaseColour(2)},
          {QObject::tr("comm (exposed)"), phaseColour(5)},
          {QObject::tr("wait for last rank"), phaseColour(4)},
          {QObject::tr("data"), phaseColour(0)},
          {QObject::tr("idle"), QColor(0xbd, 0xbd, 0xbd)}};
}

RankBreakdownChart::RankBreakdownChart(QWidget* parent)
    : RankBarsChart(tr("Where each rank's time went"), tr("seconds over the run"), kinds(),
                    parent) {}

void RankBreakdownChart::setBreakdown(const std::vector<RankBreakdown>& ranks) {
  std::vector<int> rank_ids;
  std::vector<std::vector<double>> values;
  for (const RankBreakdown& b : ranks) {
    rank_ids.push_back(b.rank);
    std::vector<double>& parts = values.emplace_back();
    for (int part = 0; part < kBreakdownParts; ++part) parts.push_back(partSeconds(b, part));
  }
  setBars(rank_ids, values);
}

}  // namespace ranklab
