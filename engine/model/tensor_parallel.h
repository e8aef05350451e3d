// Megatron-style tensor parallelism for the MLP (Shoeybi et al., "Megatron-LM", 2019): the
// Linear layers are taken in pairs, the first column-parallel (each slice computes out/t of
// its outputs, so the ReLU after it runs on the slice), the second row-parallel (each slice
// multiplies its in/t inputs and the partial outputs are summed). Two conjugate operators
// join them: f before a pair (identity forward, all-reduce of the input gradient backward)
// and g after it (all-reduce forward, identity backward): one all-reduce per pair forward and
// one backward. The first pair has no f when the data is its input (the data needs no
// gradient). A CNN's head is split the same way; its convolutions run whole on every slice,
// so f before the head gives them the whole input gradient and their gradients agree. A
// last unpaired Linear (the classifier of an even number of hidden layers) is replicated.
// A GPT's blocks split their attention heads and MLP as Megatron's (engine/model/
// transformer_block.h); its embedding, LayerNorms and tied head are replicated.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/model/layer.h"
#include "engine/model/tensor_group.h"

namespace ranklab {

// This slice's layers of `whole` (the layers of an MLP of Linear, ReLU layers or of a CNN,
// made from requests; no dropout), made on `device` without values: its Linears in pairs,
// column-parallel (their outputs split) then row-parallel (their inputs), with f and g
// between, an unpaired classifier and a CNN's body whole. Each request carries its slice, so
// the part takes its values from the whole model (part_values.h). Throws
// std::invalid_argument naming the layer whose width does not divide by group.size(), or a
// layer it cannot split. `group` must outlive the layers. A GPT's slice is made by its
// blocks themselves (modelLayers with slices).
ModelLayers sliceLayers(const ModelLayers& whole, TensorGroup& group, const ComputeDevice& device);

}  // namespace ranklab
