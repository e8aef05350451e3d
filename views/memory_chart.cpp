#include "views/memory_chart.h"

#include "views/models/live_run_model.h"

namespace ranklab {

MemoryChart::MemoryChart(QWidget* parent)
    : RankBarsChart(tr("Memory held per rank (latest step)"), tr("MB"),
                    {{tr("parameters"), QColor(0x1f, 0x77, 0xb4)},
                     {tr("gradients"), QColor(0xff, 0x7f, 0x0e)},
                     {tr("optimizer state"), QColor(0x2c, 0xa0, 0x2c)},
                     {tr("activations"), QColor(0x94, 0x67, 0xbd)},
                     {tr("one-layer scratch"), QColor(0x8c, 0x8c, 0x8c)}},
                    parent) {}

void MemoryChart::refresh(const LiveRunModel& model) {
  const auto mb = [](int64_t bytes) { return double(bytes) / 1e6; };
  std::vector<int> ranks;
  std::vector<std::vector<double>> values;
  for (int row : model.trainingRows()) {
    const RankSeries& r = model.rankAt(row);
    ranks.push_back(r.rank);
    values.push_back({mb(r.mem_params), mb(r.mem_grads), mb(r.mem_optimizer), mb(r.mem_activations),
                      mb(r.mem_buffers)});
  }
  setBars(ranks, values);
}

}  // namespace ranklab
