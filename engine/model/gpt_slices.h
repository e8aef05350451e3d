// A GPT's tensor-parallel slice: each block's heads and MLP split as Megatron's
// (engine/model/transformer_block.h), the rest replicated.
#pragma once

#include "engine/model/network.h"
#include "engine/model/tensor_group.h"
#include "engine/model/transformer_block.h"

namespace ranklab {

// This slice (group.rank() of group.size()) of `whole`, a GPT of `shape`: c_attn's q, k and v
// rows of its heads, c_fc's rows of its quarter, each c_proj's matching columns, and every
// other tensor whole, from whole's parameters. Throws std::invalid_argument when the slices
// do not divide shape.heads.
Network sliceGpt(const Network& whole, const GptShape& shape, TensorGroup& group);

}  // namespace ranklab
