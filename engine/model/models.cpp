#include "engine/model/models.h"

#include <map>
#include <stdexcept>

#include "engine/model/layers.h"

namespace ranklab {

namespace {

// Builds a chain where each layer takes the previous one's output shape.
class LayerChain {
 public:
  explicit LayerChain(Shape input) : shape_(input) {}

  template <class L, class... Args>
  void add(const std::string& kind, Args... args) {
    const std::string name = kind + std::to_string(count_[kind]++);
    layers_.push_back(std::make_unique<L>(name, shape_, args...));
    shape_ = layers_.back()->outputShape();
  }

  void addDropout(float p) {
    if (p > 0.f) add<Dropout>("drop", p);
  }

  // Hidden Linear -> ReLU [-> Dropout] layers, then the Linear to the classes.
  void addClassifier(const std::vector<int>& hidden, int classes, float dropout) {
    for (int width : hidden) {
      add<Linear>("fc", width);
      add<ReLU>("relu");
      addDropout(dropout);
    }
    add<Linear>("fc", classes);
  }

  std::vector<std::unique_ptr<Layer>> take() { return std::move(layers_); }

 private:
  Shape shape_;
  std::map<std::string, int> count_;
  std::vector<std::unique_ptr<Layer>> layers_;
};

}  // namespace

Network makeMlp(Shape input, const std::vector<int>& hidden, int classes, float dropout,
                uint64_t seed) {
  LayerChain chain(input);
  chain.addClassifier(hidden, classes, dropout);
  return Network(chain.take(), seed);
}

Network makeCnn(Shape input, const std::vector<int>& channels, int kernel,
                const std::vector<int>& hidden, int classes, float dropout, uint64_t seed) {
  LayerChain chain(input);
  for (int width : channels) {
    chain.add<Conv2d>("conv", width, kernel);
    // ReLU after the pooling equals ReLU before it (max commutes with the monotone ReLU)
    // and touches a quarter of the values.
    chain.add<MaxPool2d>("pool");
    chain.add<ReLU>("relu");
  }
  chain.add<Flatten>("flatten");
  chain.addDropout(dropout);
  chain.addClassifier(hidden, classes, dropout);
  return Network(chain.take(), seed);
}

Network makeModel(const ModelSpec& spec, Shape input, int classes, uint64_t seed) {
  const auto dropout = static_cast<float>(spec.dropout);
  if (spec.kind == "mlp") return makeMlp(input, spec.layers, classes, dropout, seed);
  if (spec.kind == "cnn") {
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
    return makeCnn(input, spec.channels, spec.kernel_size, spec.layers, classes, dropout, seed);
  }
  throw std::invalid_argument("model.kind \"" + spec.kind +
                              "\" is not available; allowed: mlp, cnn");
}

}  // namespace ranklab
