// A GPT's tensor-parallel slice (Megatron's split of each block; engine/model/
// transformer_block.h): the parts of the whole model's tensors a slice holds.
#include "engine/model/gpt_slices.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/models.h"

namespace ranklab {
namespace {

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Copies the slice's rows of a tensor of whole rows of `row` floats, the rows in `groups`
// equal groups (c_attn's q, k and v): rows [rank * k, (rank + 1) * k) of each group.
void copyRows(const float* from, size_t whole_size, float* to, size_t slice_size, size_t row,
              int groups, int rank) {
  const size_t whole_rows = whole_size / row / groups, rows = slice_size / row / groups;
  for (int g = 0; g < groups; ++g) {
    std::copy_n(from + (g * whole_rows + rank * rows) * row, rows * row, to + g * rows * row);
  }
}

// Copies the slice's columns of a (`out`, in) weight: columns [rank * k, (rank + 1) * k).
void copyColumns(const float* from, size_t whole_size, float* to, size_t slice_size, size_t out,
                 int rank) {
  const size_t in = whole_size / out, cols = slice_size / out;
  for (size_t i = 0; i < out; ++i) std::copy_n(from + i * in + rank * cols, cols, to + i * cols);
}

// Copies one of the slice's tensors (`to`, named `name`) from whole's (`from`).
void copyTensor(const std::string& name, const float* from, size_t whole_size, float* to,
                size_t slice_size, int width, int rank) {
  if (whole_size == slice_size) {  // replicated: embedding, LayerNorms, c_proj biases
    std::copy_n(from, whole_size, to);
  } else if (endsWith(name, ".attn.c_attn.weight") || endsWith(name, ".attn.c_attn.bias")) {
    copyRows(from, whole_size, to, slice_size, endsWith(name, "weight") ? width : 1, 3, rank);
  } else if (endsWith(name, ".mlp.c_fc.weight") || endsWith(name, ".mlp.c_fc.bias")) {
    copyRows(from, whole_size, to, slice_size, endsWith(name, "weight") ? width : 1, 1, rank);
  } else if (endsWith(name, ".c_proj.weight")) {
    copyColumns(from, whole_size, to, slice_size, width, rank);
  } else {
    throw std::logic_error("sliceGpt: no rule to split " + name);
  }
}

}  // namespace

Network sliceGpt(const Network& whole, const GptShape& shape, TensorGroup& group) {
  const ComputeDevice& device = whole.device();
  std::map<std::string, ParamView> whole_views;
  for (const ParamView& view : whole.views()) whole_views[view.name] = view;
  const bool copied_head = whole_views.count("lm_head.weight") > 0;
  Network slice = makeGpt(shape, 0, device, &group, copied_head);
  // The slices are cut on the host: the parameters go down whole and the slice's come up.
  std::vector<float> from(whole.parameterCount()), to(slice.parameterCount());
  device.download(from.data(), whole.params(), from.size());
  for (const ParamView& view : slice.views()) {
    const auto source = whole_views.find(view.name);
    if (source == whole_views.end()) throw std::logic_error("sliceGpt: no tensor " + view.name);
    copyTensor(view.name, from.data() + source->second.offset, source->second.size,
               to.data() + view.offset, view.size, shape.width, group.rank());
  }
  device.upload(slice.params(), to.data(), to.size());
  return slice;
}

}  // namespace ranklab
