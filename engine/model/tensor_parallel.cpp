#include "engine/model/tensor_parallel.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

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

// The kind a device table made the layer as; none for a layer it did not make.
std::optional<LayerKind> kindOf(const Layer& layer) {
  if (const LayerRequest* request = layer.request()) return request->kind;
  return std::nullopt;
}

bool isLinear(const Layer& layer) {
  return kindOf(layer) == LayerKind::kLinear;
}

// Whether a layer of the CNN's body (before the first Linear) is replicated on every slice.
bool isReplicatedBody(const Layer& layer) {
  const std::optional<LayerKind> kind = kindOf(layer);
  return kind == LayerKind::kConv2d || kind == LayerKind::kMaxPool2d || kind == LayerKind::kReLU ||
         kind == LayerKind::kFlatten;
}

// Each Linear's split: pairs (outputs, inputs), an unpaired last one whole.
std::vector<SliceSplit> splitsOf(const ModelLayers& whole) {
  size_t linears = 0;
  for (const auto& layer : whole) {
    if (isLinear(*layer)) {
      ++linears;
    } else if (kindOf(*layer) != LayerKind::kReLU && (linears > 0 || !isReplicatedBody(*layer))) {
      throw std::invalid_argument(
          "tensor parallelism splits the Linear and ReLU layers of an MLP or a CNN's head; " +
          layer->name() + " (" + layer->describe() + ") cannot be split: use model.dropout = 0");
    }
  }
  std::vector<SliceSplit> splits;
  for (size_t k = 0; k < linears; ++k) {
    splits.push_back(k % 2 == 1        ? SliceSplit::kInputs
                     : k + 1 < linears ? SliceSplit::kOutputs
                                       : SliceSplit::kWhole);
  }
  return splits;
}

// A Linear's request for the slice: its split, and a column-parallel one's outputs divided.
LayerRequest sliceOfLinear(const Layer& linear, Shape input, SliceSplit split,
                           const TensorGroup& group) {
  LayerRequest request{LayerKind::kLinear, linear.name(), input, linear.outputShape().channels};
  request.slice = {split, group.rank(), group.size()};
  if (split != SliceSplit::kOutputs) return request;
  if (request.outputs % group.size() != 0) {
    throw std::invalid_argument(
        linear.name() + " has " + std::to_string(request.outputs) +
        " outputs, which parallel.tensor = " + std::to_string(group.size()) + " does not divide");
  }
  request.outputs /= group.size();
  return request;
}

}  // namespace

ModelLayers sliceLayers(const ModelLayers& whole, TensorGroup& group, const ComputeDevice& device) {
  const std::vector<SliceSplit> splits = splitsOf(whole);
  ModelLayers layers;
  Shape shape = whole.front()->inputShape();
  size_t k = 0;
  auto add = [&](std::unique_ptr<Layer> layer) {
    shape = layer->outputShape();
    layers.push_back(std::move(layer));
  };
  bool body_learns = false;  // a replicated body before the pairs needs f's input gradient
  for (const auto& layer : whole) {
    if (!isLinear(*layer)) {  // a ReLU, on whatever its input is now
      const bool body = k == 0;
      add(body ? device.makeLayer(*layer->request())
               : device.makeLayer({LayerKind::kReLU, layer->name(), shape}));
      body_learns = body_learns || (body && !layer->paramTensors().empty());
      continue;
    }
    const SliceSplit split = splits[k];
    const LayerRequest linear = sliceOfLinear(*layer, shape, split, group);
    if (split == SliceSplit::kOutputs && (k > 0 || body_learns))
      add(std::make_unique<CopyToSlices>("f" + std::to_string(k / 2), shape, group, device));
    add(device.makeLayer(linear));
    if (split == SliceSplit::kInputs)
      add(std::make_unique<SumOverSlices>("g" + std::to_string(k / 2), shape, group, device));
    ++k;
  }
  return layers;
}

}  // namespace ranklab
