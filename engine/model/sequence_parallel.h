// Sequence parallelism (Korthikanti et al., "Reducing Activation Recomputation in Large
// Transformer Models", 2022) for a GPT under tensor parallelism: between the blocks each
// slice holds its own rows of the activation (TensorGroup::ownedPart: a contiguous share of
// the batch's batch x context rows), so the LayerNorms and residual adds, which work row by
// row, run on 1/t of the rows and keep 1/t of the memory. Inside a block an all-gather
// before each column-parallel Linear and a reduce-scatter after each row-parallel one take
// the place of Megatron's f and g (engine/model/transformer_block.h). These two layers join
// the split rows to the whole ones around the blocks: after the embedding and before ln_f.
#pragma once

#include <string>

#include "engine/model/compute_device.h"
#include "engine/model/layer.h"
#include "engine/model/tensor_group.h"

namespace ranklab {

// The two layers' common part: the slices' group and the device their rows live on.
class SequenceCollective : public Layer {
 public:
  SequenceCollective(std::string name, Shape input, Shape output, TensorGroup& group,
                     const ComputeDevice& device)
      : Layer(std::move(name), input, output), group_(group), device_(device) {}
  bool communicates() const override { return true; }

 protected:
  // The batch's whole rows, in floats, and this slice's part of them.
  size_t wholeFloats(int batch) const;
  Chunk ownPart(int batch) const { return group_.ownedPart(wholeFloats(batch)); }

  TensorGroup& group_;
  const ComputeDevice& device_;
};

// Whole rows (context, 1, width) in, this slice's rows (context / t, 1, width) out: forward
// keeps its part; backward all-gathers the slices' parts of the gradient (each slice's
// embedding needs the whole of it). Context must be a multiple of the slices.
class ScatterToSequence : public SequenceCollective {
 public:
  ScatterToSequence(std::string name, Shape whole, TensorGroup& group, const ComputeDevice& device);
  std::string describe() const override { return "ScatterToSequenceParallel()"; }
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
};

// This slice's rows in, whole rows out: forward all-gathers the slices' parts; backward
// keeps this slice's part of the gradient, which every slice computed alike (the layers
// after it, ln_f and the head, are replicated).
class GatherFromSequence : public SequenceCollective {
 public:
  GatherFromSequence(std::string name, Shape whole, TensorGroup& group,
                     const ComputeDevice& device);
  std::string describe() const override { return "GatherFromSequenceParallel()"; }
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
};

// A slice's rows of `whole` rows: (context / t, 1, width). Throws std::invalid_argument
// when t does not divide the context.
Shape sequenceSliceOf(Shape whole, int slices);

}  // namespace ranklab
