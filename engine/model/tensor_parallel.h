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

#include "engine/model/network.h"
#include "engine/model/tensor_group.h"

namespace ranklab {

// This slice of `whole` (an MLP of Linear, ReLU layers, a CNN, or a GPT; no dropout): its
// column- and row-parallel Linears hold their rows and columns of whole's parameters,
// replicated ones (the row-parallel biases, an unpaired classifier, a CNN's convolutions, a
// GPT's embedding and LayerNorms) all of theirs. Throws std::invalid_argument naming the
// layer whose width (or heads) does not divide by group.size(), or a layer it cannot split.
// `group` must outlive the network.
Network sliceForTensorParallel(const Network& whole, TensorGroup& group);

}  // namespace ranklab
