#include "engine/model/models.h"

#include <map>
#include <stdexcept>

#include "engine/model/compute_device.h"
#include "engine/model/sequence_parallel.h"
#include "engine/model/tensor_parallel.h"
#include "engine/model/transformer_block.h"

namespace ranklab {

namespace {

// Builds a chain where each layer takes the previous one's output shape, each made by the
// device.
class LayerChain {
 public:
  LayerChain(Shape input, const ComputeDevice& device) : shape_(input), device_(device) {}

  void add(const std::string& prefix, LayerKind kind, int outputs = 0, int kernel = 0,
           float dropout = 0.f) {
    LayerRequest request;
    request.kind = kind;
    request.name = prefix + std::to_string(count_[prefix]++);
    request.input = shape_;
    request.outputs = outputs;
    request.kernel = kernel;
    request.dropout = dropout;
    layers_.push_back(device_.makeLayer(request));
    shape_ = layers_.back()->outputShape();
  }

  void addDropout(float p) {
    if (p > 0.f) add("drop", LayerKind::kDropout, 0, 0, p);
  }

  // Hidden Linear -> ReLU [-> Dropout] layers, then the Linear to the classes.
  void addClassifier(const std::vector<int>& hidden, int classes, float dropout) {
    for (int width : hidden) {
      add("fc", LayerKind::kLinear, width);
      add("relu", LayerKind::kReLU);
      addDropout(dropout);
    }
    add("fc", LayerKind::kLinear, classes);
  }

  std::vector<std::unique_ptr<Layer>> take() { return std::move(layers_); }

 private:
  Shape shape_;
  const ComputeDevice& device_;
  std::map<std::string, int> count_;
  std::vector<std::unique_ptr<Layer>> layers_;
};

std::vector<std::unique_ptr<Layer>> mlpLayers(Shape input, const std::vector<int>& hidden,
                                              int classes, float dropout,
                                              const ComputeDevice& device) {
  LayerChain chain(input, device);
  chain.addClassifier(hidden, classes, dropout);
  return chain.take();
}

std::vector<std::unique_ptr<Layer>> cnnLayers(Shape input, const std::vector<int>& channels,
                                              int kernel, const std::vector<int>& hidden,
                                              int classes, float dropout,
                                              const ComputeDevice& device) {
  LayerChain chain(input, device);
  for (int width : channels) {
    chain.add("conv", LayerKind::kConv2d, width, kernel);
    // ReLU after the pooling equals ReLU before it (max commutes with the monotone ReLU)
    // and touches a quarter of the values.
    chain.add("pool", LayerKind::kMaxPool2d);
    chain.add("relu", LayerKind::kReLU);
  }
  chain.add("flatten", LayerKind::kFlatten);
  chain.addDropout(dropout);
  chain.addClassifier(hidden, classes, dropout);
  return chain.take();
}

}  // namespace

Network makeMlp(Shape input, const std::vector<int>& hidden, int classes, float dropout,
                uint64_t seed, const ComputeDevice& device) {
  return Network(mlpLayers(input, hidden, classes, dropout, device), seed, device);
}

Network makeCnn(Shape input, const std::vector<int>& channels, int kernel,
                const std::vector<int>& hidden, int classes, float dropout, uint64_t seed,
                const ComputeDevice& device) {
  return Network(cnnLayers(input, channels, kernel, hidden, classes, dropout, device), seed,
                 device);
}

namespace {

std::vector<std::unique_ptr<Layer>> gptLayers(const GptShape& shape, const ComputeDevice& device,
                                              TensorGroup* slices, bool copied_head) {
  const Shape sequence{shape.context, 1, shape.width};
  std::vector<std::unique_ptr<Layer>> layers;
  LayerRequest embed{LayerKind::kEmbedding, "embed", {shape.context, 1, 1}, shape.width};
  embed.vocab = shape.vocab;
  layers.push_back(device.makeLayer(embed));
  auto* table = dynamic_cast<TokenTable*>(layers.back().get());
  if (!table) throw std::logic_error(device.name() + ": its embedding has no token table");
  if (shape.dropout > 0.f) {
    LayerRequest drop{LayerKind::kDropout, "drop", sequence};
    drop.dropout = shape.dropout;
    layers.push_back(device.makeLayer(drop));
  }
  // Sequence parallelism: the blocks hold the slice's rows alone (sequence_parallel.h).
  const bool split_rows = slices && slices->sequenceParallel();
  if (split_rows)
    layers.push_back(std::make_unique<ScatterToSequence>("sp_scatter", sequence, *slices, device));
  for (int b = 0; b < shape.blocks; ++b)
    layers.push_back(
        std::make_unique<TransformerBlock>("h" + std::to_string(b), shape, device, slices));
  if (split_rows)
    layers.push_back(std::make_unique<GatherFromSequence>("sp_gather", sequence, *slices, device));
  layers.push_back(device.makeLayer({LayerKind::kLayerNorm, "ln_f", sequence}));
  layers.push_back(
      std::make_unique<TiedHead>("lm_head", sequence, *table, "embed.token", device,
                                 copied_head ? TiedHead::Tie::kCopy : TiedHead::Tie::kShared));
  return layers;
}

}  // namespace

Network makeGpt(const GptShape& shape, uint64_t seed, const ComputeDevice& device,
                TensorGroup* slices, bool copied_head) {
  return Network(gptLayers(shape, device, slices, copied_head), seed, device);
}

GptShape gptShapeOf(const ModelSpec& spec, int vocab) {
  return {vocab,      spec.context, spec.width,
          spec.heads, spec.blocks,  static_cast<float>(spec.dropout)};
}

namespace {

std::vector<std::unique_ptr<Layer>> cnnModelLayers(const ModelSpec& spec, Shape input, int classes,
                                                   float dropout, const ComputeDevice& device) {
  // Each conv keeps the size (same padding) and each pool halves it.
  int side = std::min(input.height, input.width);
  for (size_t i = 0; i < spec.channels.size(); ++i) side /= 2;
  if (side < 1 || input.height < 2) {
    throw std::invalid_argument("model.kind \"cnn\" needs image data: the samples are " +
                                input.str() + ", too small for " +
                                std::to_string(spec.channels.size()) +
                                " conv+pool stages (use data.dataset = "
                                "\"fashion-mnist\", or model.kind = \"mlp\")");
  }
  return cnnLayers(input, spec.channels, spec.kernel_size, spec.layers, classes, dropout, device);
}

std::vector<std::unique_ptr<Layer>> gptModelLayers(const ModelSpec& spec, Shape input, int classes,
                                                   const ComputeDevice& device, bool head_apart,
                                                   TensorGroup* slices) {
  if (input != Shape{spec.context, 1, 1}) {
    throw std::invalid_argument(
        "model.kind \"gpt\" reads sequences of model.context = " + std::to_string(spec.context) +
        " tokens, and the samples are " + input.str() + " (use data.dataset = \"text\")");
  }
  return gptLayers(gptShapeOf(spec, classes), device, slices, head_apart);
}

// The MLP's or CNN's layers, made on `device`.
ModelLayers imageModelLayers(const ModelSpec& spec, Shape input, int classes,
                             const ComputeDevice& device) {
  const auto dropout = static_cast<float>(spec.dropout);
  if (spec.kind == ModelKind::kCnn) return cnnModelLayers(spec, input, classes, dropout, device);
  return mlpLayers(input, spec.layers, classes, dropout, device);
}

}  // namespace

ModelLayers modelLayers(const ModelSpec& spec, Shape input, int classes,
                        const ComputeDevice& device, bool head_apart, TensorGroup* slices) {
  switch (spec.kind) {
    case ModelKind::kMlp:
    case ModelKind::kCnn:
      // A slice's layers are cut from the whole model's requests (made on the host: no buffers).
      if (slices)
        return sliceLayers(imageModelLayers(spec, input, classes, cpuDevice()), *slices, device);
      return imageModelLayers(spec, input, classes, device);
    case ModelKind::kGpt:
      return gptModelLayers(spec, input, classes, device, head_apart, slices);
  }
  throw std::logic_error("model.kind: no layers for " + nameText(spec.kind));
}

Network makeModel(const ModelSpec& spec, Shape input, int classes, uint64_t seed,
                  const ComputeDevice& device, bool head_apart) {
  return Network(modelLayers(spec, input, classes, device, head_apart), seed, device);
}

}  // namespace ranklab
