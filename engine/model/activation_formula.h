// The memory a GPT's layers keep from a training forward for their backward, by formula:
// what the memory ledger (Network::memoryPerLayer) measures from the buffers they hold.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "engine/model/transformer_block.h"

namespace ranklab {

// The bytes a block of `shape` keeps from a training forward of `batch` samples for its
// backward, split over `slices`, counted from this implementation's fp32 buffers as
// Korthikanti et al. count Megatron's (s b h (34 + 5 a s / h) bytes in half precision).
// Per row (batch x context of them), width h, heads a, t slices, in floats:
//   its output (the network keeps it: the next layer's input)            h
//   ln_1 h, q|k|v 3h/t, the heads' output h/t, attn.c_proj h, the
//   residual h, ln_2 h, c_fc 4h/t, GELU 4h/t, mlp.c_proj h               5h + 12h/t
//   the two LayerNorms' mean and 1/std                                   4
//   GELU'(x) (kept to skip erf in backward)                              4h/t
//   the attention's probabilities                                        a s / t
//   with model.dropout: both dropouts' outputs and masks                 4h
// bytes = 4 x rows x (6h + 16h/t + 4 + a s/t [+ 4h]). docs/memory.md sets it beside
// Megatron's; the ledger measures it.
// Under sequence parallelism (`sequence_parallel`, t > 1) the block keeps its output, ln_1,
// the residual, ln_2 and the LayerNorms' statistics for the slice's rows alone, and the
// c_projs' partial outputs only until their reduce-scatter (a scratch): every term is
// divided by t, 4 x rows x (20h + 4 + a s) / t, as Korthikanti et al.'s s b h (34/t + 5as/(ht)).
size_t gptBlockActivationBytes(const GptShape& shape, int batch, int slices = 1,
                               bool sequence_parallel = false);

// The formula's bytes for the GPT's layer `layer` ("embed", "drop", "h3", "ln_f", "lm_head",
// "loss": the loss head's probabilities); nothing for a name it does not know. Rows of
// `batch` samples: the embedding and its dropout keep h floats per row (the dropout twice:
// its mask), ln_f h + 2, the head and the loss head the vocabulary; under sequence
// parallelism "sp_scatter" the slice's rows (h / t per row) and "sp_gather" whole ones (h).
std::optional<size_t> gptActivationFormula(const std::string& layer, const GptShape& shape,
                                           int batch, int slices = 1,
                                           bool sequence_parallel = false);

}  // namespace ranklab
