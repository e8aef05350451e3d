// The models a job file can ask for ([model] kind), built as Networks whose layers a
// compute device makes (the CPU unless told).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/job/job_spec.h"
#include "engine/model/compute_device.h"
#include "engine/model/network.h"
#include "engine/model/transformer_block.h"

namespace ranklab {

// Linear -> ReLU [-> Dropout] -> ... -> Linear: one hidden layer per width.
Network makeMlp(Shape input, const std::vector<int>& hidden, int classes, float dropout,
                uint64_t seed, const ComputeDevice& device = cpuDevice());

// conv-pool-conv-pool-fc: per entry of `channels`, Conv2d(kernel, same padding) ->
// MaxPool2d(2) -> ReLU (the same function as Conv -> ReLU -> MaxPool, with less work);
// then Flatten, the hidden Linear -> ReLU layers of `hidden`, and a Linear
// to the classes, with Dropout before each Linear when dropout > 0.
Network makeCnn(Shape input, const std::vector<int>& channels, int kernel,
                const std::vector<int>& hidden, int classes, float dropout, uint64_t seed,
                const ComputeDevice& device = cpuDevice());

// nanoGPT's GPT (engine/model/transformer_block.h): token and position embedding
// ("embed", its table shared with the output head), [Dropout,] `blocks` blocks ("h0"...),
// a final LayerNorm ("ln_f") and the tied head ("lm_head"); samples (context, 1, 1) of token
// ids, logits (context, 1, vocab). With `slices`, each block is this rank's tensor-parallel
// slice of it (the embedding, LayerNorms and head whole); under sequence parallelism
// (slices->sequenceParallel()) the blocks hold the slice's rows alone, between a
// ScatterToSequence ("sp_scatter") after the embedding and a GatherFromSequence
// ("sp_gather") before ln_f.
// With `copied_head`, the head holds a copy of the token table ("lm_head.weight", as
// Megatron's last pipeline stage), not the table itself.
Network makeGpt(const GptShape& shape, uint64_t seed, const ComputeDevice& device = cpuDevice(),
                TensorGroup* slices = nullptr, bool copied_head = false);

// A GPT's sizes from the job's [model] keys, over a vocabulary of `vocab` tokens.
GptShape gptShapeOf(const ModelSpec& spec, int vocab);

// The layers of the job's [model] for samples of shape `input`, as makeModel chains them,
// without the network's buffers: what a memory estimate counts without allocating the model.
// With `slices`, this rank's tensor-parallel slice of them (tensor_parallel.h; a GPT's
// blocks split themselves), which takes its values from the whole model (part_values.h).
ModelLayers modelLayers(const ModelSpec& spec, Shape input, int classes,
                        const ComputeDevice& device = cpuDevice(), bool head_apart = false,
                        TensorGroup* slices = nullptr);
// The job's [model] for samples of shape `input`; std::invalid_argument names the
// model key that does not fit the data. `head_apart`: a GPT's head will sit on another
// rank than its embedding (a pipeline's last stage), so it holds a copy of the table.
Network makeModel(const ModelSpec& spec, Shape input, int classes, uint64_t seed,
                  const ComputeDevice& device = cpuDevice(), bool head_apart = false);

}  // namespace ranklab
