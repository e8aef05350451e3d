// A part of a model (a pipeline stage, a tensor slice, or both) takes its values from the
// whole model every rank draws from one seed, without the whole model being built: the
// whole model's layers (objects made on the host, no buffers) are drawn in order, one at a
// time, and each layer of the part cuts its tensors from its namesake's by the part each
// tensor says it holds (TensorPart), so every rank's part holds one model's values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/layer.h"

namespace ranklab {

// The part's values, in the order a Network of `part` lays them out, as the whole model
// drawn from `seed` holds them (each whole layer bound to a host scratch and drawn by its
// init, as Network draws them). A layer of the part with parameters has a namesake in
// `whole` (std::logic_error otherwise).
std::vector<float> drawPartValues(ModelLayers& whole, const ModelLayers& part, uint64_t seed);

// Where each of the part's values sits in the whole model's flat buffer.
std::vector<uint64_t> wholeIndexOfPart(const ModelLayers& whole, const ModelLayers& part);

// A model's describe() ("Linear(784, 256) -> ReLU() -> ...") and parameter count, from its
// layers.
std::string describeLayers(const ModelLayers& layers);
size_t parameterCountOf(const ModelLayers& layers);

}  // namespace ranklab
