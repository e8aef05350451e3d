#include "storage/activations_event.h"

#include <algorithm>
#include <sstream>

namespace ranklab {

namespace {

// "h0 1234 1234 5678" (a "-" for no formula); nothing if it is not that.
std::optional<LayerActivations> parseLayer(const std::string& item) {
  std::istringstream in(item);
  LayerActivations layer;
  std::string formula;
  if (!(in >> layer.layer >> layer.bytes >> formula >> layer.workspace)) return std::nullopt;
  if (formula != "-") {
    try {
      layer.formula = std::stoll(formula);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return layer;
}

}  // namespace

std::vector<LayerActivations> parseActivationsEvent(const std::string& text) {
  const std::string mark = "backward workspace): ";
  const size_t at = text.find(mark);
  if (at == std::string::npos) return {};
  std::vector<LayerActivations> layers;
  std::istringstream items(text.substr(at + mark.size()));
  for (std::string item; std::getline(items, item, ';');) {
    const std::optional<LayerActivations> layer = parseLayer(item);
    if (!layer) return {};
    layers.push_back(*layer);
  }
  return layers;
}

bool sameLedger(const std::vector<LayerActivations>& a, const std::vector<LayerActivations>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.layer == y.layer && x.bytes == y.bytes;
  });
}

}  // namespace ranklab
