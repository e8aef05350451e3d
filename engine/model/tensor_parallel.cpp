#include "engine/model/tensor_parallel.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/gpt_slices.h"

namespace ranklab {

namespace {

// f and g: a copy of their input one way, a sum over the slices the other way.
class SliceCollective : public Layer {
 public:
  SliceCollective(std::string name, Shape shape, TensorGroup& group, const ComputeDevice& device)
      : Layer(std::move(name), shape, shape), group_(group), device_(device) {}
  bool communicates() const override { return true; }

 protected:
  // to = from, then (when sum) summed over the slices, timed as forward or backward.
  void copy(const float* from, float* to, int batch, bool sum, bool in_backward) {
    const size_t floats = static_cast<size_t>(batch) * inputShape().size();
    device_.copy(to, from, floats);
    if (sum) group_.sum(to, floats, in_backward, device_);
  }

 private:
  TensorGroup& group_;
  const ComputeDevice& device_;  // the network's, where x, y and the gradients are
};

// Megatron's f: the identity forward; backward sums the slices' parts of the input gradient.
class CopyToSlices : public SliceCollective {
 public:
  using SliceCollective::SliceCollective;
  std::string describe() const override { return "CopyToTensorSlices()"; }
  void forward(const float* x, float* y, int batch, const ForwardPass&) override {
    copy(x, y, batch, false, false);
  }
  void backward(const float*, const float*, const float* dy, float* dx, int batch) override {
    if (dx) copy(dy, dx, batch, true, true);
  }
};

// Megatron's g: forward sums the row-parallel slices' partial outputs; backward the identity.
class SumOverSlices : public SliceCollective {
 public:
  using SliceCollective::SliceCollective;
  std::string describe() const override { return "SumOverTensorSlices()"; }
  void forward(const float* x, float* y, int batch, const ForwardPass&) override {
    copy(x, y, batch, true, false);
  }
  void backward(const float*, const float*, const float* dy, float* dx, int batch) override {
    if (dx) copy(dy, dx, batch, false, true);
  }
};

enum class Split { kColumns, kRows, kReplicated };

// The kind a device table made the layer as; none for a layer it did not make.
std::optional<LayerKind> kindOf(const Layer& layer) {
  if (const LayerRequest* request = layer.request()) return request->kind;
  return std::nullopt;
}

bool isLinear(const Layer& layer) {
  return kindOf(layer) == LayerKind::kLinear;
}

const ParamView& viewOf(const Network& net, const std::string& name) {
  for (const auto& view : net.views())
    if (view.name == name) return view;
  throw std::logic_error("sliceForTensorParallel: no tensor " + name);
}

// Copies this slice's part of a Linear's weight (out, in) and bias from whole's parameters
// (`from`, host memory) into the slice's (`to`).
void copySlice(const Network& whole, const float* from, const Network& slice, float* to,
               const std::string& layer, Split split, int rank) {
  const ParamView& w = viewOf(whole, layer + ".weight");
  const ParamView& b = viewOf(whole, layer + ".bias");
  const ParamView& sw = viewOf(slice, layer + ".weight");
  const ParamView& sb = viewOf(slice, layer + ".bias");
  const size_t out = b.size, in = w.size / out;
  if (split == Split::kColumns) {  // rows [r * out', (r + 1) * out') of W, and of b
    const size_t rows = sb.size;
    std::copy_n(from + w.offset + rank * rows * in, rows * in, to + sw.offset);
    std::copy_n(from + b.offset + rank * rows, rows, to + sb.offset);
    return;
  }
  // kRows: columns [r * in', (r + 1) * in') of each row; kReplicated: every column.
  const size_t cols = sw.size / out, first = split == Split::kRows ? rank * cols : 0;
  for (size_t i = 0; i < out; ++i) {
    std::copy_n(from + w.offset + i * in + first, cols, to + sw.offset + i * cols);
  }
  std::copy_n(from + b.offset, out, to + sb.offset);
}

// Whether a layer of the CNN's body (before the first Linear) is replicated on every slice.
bool isReplicatedBody(const Layer& layer) {
  const std::optional<LayerKind> kind = kindOf(layer);
  return kind == LayerKind::kConv2d || kind == LayerKind::kMaxPool2d || kind == LayerKind::kReLU ||
         kind == LayerKind::kFlatten;
}

// Each Linear's part: pairs (columns, rows), an unpaired last one replicated.
std::vector<Split> splitsOf(const Network& whole) {
  size_t linears = 0;
  for (const auto& layer : whole.layers()) {
    if (isLinear(*layer)) {
      ++linears;
    } else if (kindOf(*layer) != LayerKind::kReLU && (linears > 0 || !isReplicatedBody(*layer))) {
      throw std::invalid_argument(
          "tensor parallelism splits the Linear and ReLU layers of an MLP or a CNN's head; " +
          layer->name() + " (" + layer->describe() + ") cannot be split: use model.dropout = 0");
    }
  }
  std::vector<Split> splits;
  for (size_t k = 0; k < linears; ++k) {
    splits.push_back(k % 2 == 1        ? Split::kRows
                     : k + 1 < linears ? Split::kColumns
                                       : Split::kReplicated);
  }
  return splits;
}

// The same layer for the slice, made again from its request: a CNN body's convolution,
// pooling, ReLU or flatten whole (splitsOf let only those, with their requests, through).
std::unique_ptr<Layer> replicate(const Layer& layer, const ComputeDevice& device) {
  return device.makeLayer(*layer.request());
}

// Copies every tensor of a replicated body layer whole from whole's parameters (`from`) into
// the slice's (`to`), both host memory.
void copyWhole(const Network& whole, const float* from, const Network& slice, float* to,
               const std::string& layer) {
  const std::string prefix = layer + ".";  // its views: "conv0.weight", "conv0.bias"
  for (const auto& view : slice.views()) {
    if (view.name.compare(0, prefix.size(), prefix) != 0) continue;
    const ParamView& source = viewOf(whole, view.name);
    std::copy_n(from + source.offset, source.size, to + view.offset);
  }
}

// The slice's views whose tensors it holds a part of: those smaller than whole's.
std::vector<bool> slicedViews(const Network& whole, const Network& slice) {
  std::vector<bool> sliced;
  for (const ParamView& view : slice.views())
    sliced.push_back(view.size < viewOf(whole, view.name).size);
  return sliced;
}

// This slice of `whole`, its parameters cut from whole's.
Network cutSlice(const Network& whole, TensorGroup& group) {
  for (const auto& layer : whole.layers())
    if (const auto* block = dynamic_cast<const TransformerBlock*>(layer.get()))
      return sliceGpt(whole, block->shape(), group);
  const int t = group.size();
  const std::vector<Split> splits = splitsOf(whole);
  const ComputeDevice& device = whole.device();
  std::vector<std::unique_ptr<Layer>> layers;
  Shape shape = whole.inputShape();
  size_t k = 0;
  auto add = [&](std::unique_ptr<Layer> layer) {
    shape = layer->outputShape();
    layers.push_back(std::move(layer));
  };
  bool body_learns = false;  // a replicated body before the pairs needs f's input gradient
  for (const auto& layer : whole.layers()) {
    if (!isLinear(*layer)) {  // a ReLU, on whatever its input is now
      const bool body = k == 0;
      add(body ? replicate(*layer, device)
               : device.makeLayer({LayerKind::kReLU, layer->name(), shape}));
      body_learns = body_learns || (body && !layer->paramTensors().empty());
      continue;
    }
    const Split split = splits[k];
    LayerRequest linear{LayerKind::kLinear, layer->name(), shape, layer->outputShape().channels};
    if (split == Split::kColumns) {
      if (linear.outputs % t != 0) {
        throw std::invalid_argument(layer->name() + " has " + std::to_string(linear.outputs) +
                                    " outputs, which parallel.tensor = " + std::to_string(t) +
                                    " does not divide");
      }
      linear.outputs /= t;
      if (k > 0 || body_learns)
        add(std::make_unique<CopyToSlices>("f" + std::to_string(k / 2), shape, group, device));
    }
    linear.adds_bias = split != Split::kRows || group.rank() == 0;
    linear.input = shape;
    add(device.makeLayer(linear));
    if (split == Split::kRows)
      add(std::make_unique<SumOverSlices>("g" + std::to_string(k / 2), shape, group, device));
    ++k;
  }
  Network slice(std::move(layers), 0, device);
  // The slices are cut on the host: the parameters go down whole and the slice's come up.
  std::vector<float> from(whole.parameterCount()), to(slice.parameterCount());
  device.download(from.data(), whole.params(), from.size());
  k = 0;
  for (const auto& layer : whole.layers()) {
    if (isLinear(*layer))
      copySlice(whole, from.data(), slice, to.data(), layer->name(), splits[k++], group.rank());
    else if (!layer->paramTensors().empty())
      copyWhole(whole, from.data(), slice, to.data(), layer->name());
  }
  device.upload(slice.params(), to.data(), to.size());
  return slice;
}

}  // namespace

Network sliceForTensorParallel(const Network& whole, TensorGroup& group) {
  Network slice = cutSlice(whole, group);
  slice.setSlicedViews(slicedViews(whole, slice));
  return slice;
}

}  // namespace ranklab
