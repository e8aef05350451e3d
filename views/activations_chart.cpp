#include "views/activations_chart.h"

#include <algorithm>

#include "views/models/live_run_model.h"

namespace ranklab {

namespace {

bool isBlock(const QString& layer) {
  bool number = false;
  return layer.size() > 1 && layer[0] == 'h' && (layer.mid(1).toInt(&number), number);
}

// A GPT's blocks from light to dark violet; its other layers and an MLP's in colours of
// their own.
QColor layerColour(const QString& layer, int index, int blocks) {
  if (isBlock(layer)) {
    const int b = layer.mid(1).toInt(), n = std::max(1, blocks);
    return QColor::fromHsv(270, 70 + 150 * b / n, 235 - 90 * b / n);
  }
  if (layer == "embed") return QColor(0x2c, 0xa0, 0x2c);
  if (layer == "drop") return QColor(0x8c, 0x8c, 0x8c);
  if (layer == "ln_f") return QColor(0x17, 0xbe, 0xcf);
  if (layer == "lm_head") return QColor(0xff, 0x7f, 0x0e);
  if (layer == "loss") return QColor(0xd6, 0x27, 0x28);
  // Sequence parallelism's scatter and gather: the same brown, as the two ends of the split.
  if (layer == "sp_scatter" || layer == "sp_gather") return QColor(0x8c, 0x56, 0x4b);
  static const QColor palette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e),
                                   QColor(0x2c, 0xa0, 0x2c), QColor(0xd6, 0x27, 0x28),
                                   QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                   QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f)};
  return palette[index % 8];
}

}  // namespace

ActivationsChart::ActivationsChart(QWidget* parent)
    : RankBarsChart(tr("Activations kept for backward, per layer (after the warm-up)"), tr("MB"),
                    {}, parent) {}

namespace {

// The ledgers of ranks that hold the same part of the model (data replicas, a stage's
// slices) are one bar, named by its ranks: 8 ranks in 3D are 2 bars.
struct Bar {
  QString name;
  int rank;  // the first of them
  const std::vector<LayerActivations>* layers;
};

}  // namespace

bool ActivationsChart::refresh(const LiveRunModel& model) {
  std::vector<Bar> bars;
  QStringList layers;  // every layer any rank holds, in the order the ranks hold them
  for (int row : model.trainingRows()) {
    const RankSeries& r = model.rankAt(row);
    if (r.activations.empty()) continue;
    auto same = std::find_if(bars.begin(), bars.end(),
                             [&](const Bar& b) { return sameLedger(*b.layers, r.activations); });
    if (same != bars.end()) {
      same->name += QStringLiteral(",%1").arg(r.rank);
      continue;
    }
    bars.push_back({tr("rank %1").arg(r.rank), r.rank, &r.activations});
    for (const LayerActivations& layer : r.activations)
      if (!layers.contains(QString::fromStdString(layer.layer)))
        layers << QString::fromStdString(layer.layer);
  }
  if (bars.empty()) return false;
  if (layers != layers_) {
    const int blocks = int(std::count_if(layers.begin(), layers.end(), isBlock));
    std::vector<Part> parts;
    for (int i = 0; i < layers.size(); ++i)
      parts.push_back({layers[i], layerColour(layers[i], i, blocks)});
    setParts(parts);
    layers_ = layers;
  }
  std::vector<int> ranks;
  QStringList names;
  std::vector<std::vector<double>> values;
  for (Bar& bar : bars) {
    if (bar.name.contains(',')) bar.name.replace(0, 4, tr("ranks"));
    ranks.push_back(bar.rank);
    names << bar.name;
    std::vector<double> mb(size_t(layers.size()), 0.0);
    for (const LayerActivations& layer : *bar.layers)
      mb[size_t(layers.indexOf(QString::fromStdString(layer.layer)))] = double(layer.bytes) / 1e6;
    values.push_back(std::move(mb));
  }
  setBars(ranks, values, names);
  return true;
}

}  // namespace ranklab
