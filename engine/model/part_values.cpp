#include "engine/model/part_values.h"

#include <deque>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>

#include "engine/model/transformer_layers.h"

namespace ranklab {
namespace {

size_t parameterCountOf(const Layer& layer) {
  size_t count = 0;
  for (const ParamTensor& tensor : layer.paramTensors()) count += tensor.size;
  return count;
}

// Copies `part`'s tensors from its whole namesake's values (`whole`) into `to`.
template <class T>
void cutLayer(const Layer& whole_layer, const T* whole, const Layer& part, T* to) {
  const std::vector<ParamTensor> from = whole_layer.paramTensors(), tensors = part.paramTensors();
  if (from.size() != tensors.size())
    throw std::logic_error("part of a model: " + part.name() + " has other tensors than the whole");
  for (size_t t = 0; t < tensors.size(); ++t) {
    const ParamTensor& tensor = tensors[t];
    if (tensor.suffix != from[t].suffix || wholeSizeOf(tensor.part, tensor.size) != from[t].size) {
      throw std::logic_error("part of a model: " + part.name() + "." + tensor.suffix +
                             " is not a part of the whole model's tensor");
    }
    copyPart(whole, tensor.part, tensor.size, tensor.rows, to);
    whole += from[t].size;
    to += tensor.size;
  }
}

// Walks the whole model's layers in order; `values_of(Layer&, offset)` gives each one's
// values (called for every layer, so a draw keeps its stream); each part layer with
// parameters cuts its own from its namesake's.
template <class T, class ValuesOf>
std::vector<T> cutFromWhole(const ModelLayers& whole, const ModelLayers& part, ValuesOf values_of) {
  std::map<std::string, std::pair<const Layer*, size_t>> wanted;  // by name: layer, offset
  size_t count = 0;
  for (const auto& layer : part) {
    const size_t n = parameterCountOf(*layer);
    if (n > 0) wanted[layer->name()] = {layer.get(), count};
    count += n;
  }
  std::vector<T> values(count);
  size_t found = 0, offset = 0;
  for (const auto& layer : whole) {
    const T* from = values_of(*layer, offset);
    offset += parameterCountOf(*layer);
    const auto it = wanted.find(layer->name());
    if (it == wanted.end()) continue;
    cutLayer(*layer, from, *it->second.first, values.data() + it->second.second);
    ++found;
  }
  if (found != wanted.size())
    throw std::logic_error("part of a model: a layer with parameters is not in the whole model");
  return values;
}

}  // namespace

std::vector<float> drawPartValues(ModelLayers& whole, const ModelLayers& part, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> scratch;
  std::deque<std::vector<float>> tables;  // a token table a later copied head reads at init
  auto draw = [&](Layer& layer, size_t) -> const float* {
    const size_t n = parameterCountOf(layer);
    std::vector<float>& values = dynamic_cast<TokenTable*>(&layer)
                                     ? tables.emplace_back(n)
                                     : (scratch.assign(n, 0.f), scratch);
    layer.bind(values.data(), nullptr);
    layer.init(rng);
    return values.data();
  };
  return cutFromWhole<float>(whole, part, draw);
}

std::vector<uint64_t> wholeIndexOfPart(const ModelLayers& whole, const ModelLayers& part) {
  std::vector<uint64_t> indices;
  auto index = [&](Layer& layer, size_t offset) -> const uint64_t* {
    indices.resize(parameterCountOf(layer));
    std::iota(indices.begin(), indices.end(), static_cast<uint64_t>(offset));
    return indices.data();
  };
  return cutFromWhole<uint64_t>(whole, part, index);
}

std::string describeLayers(const ModelLayers& layers) {
  std::string text;
  for (const auto& layer : layers) text += (text.empty() ? "" : " -> ") + layer->describe();
  return text;
}

size_t parameterCountOf(const ModelLayers& layers) {
  size_t count = 0;
  for (const auto& layer : layers) count += parameterCountOf(*layer);
  return count;
}

}  // namespace ranklab
