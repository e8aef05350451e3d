// Multi-layer perceptron: Linear -> ReLU -> ... -> Linear, softmax cross-entropy.
// All parameters live in one flat buffer (and gradients in a twin), with named views,
// so a strategy reduces one buffer and the optimizer is one loop.
// Linear layer l stores W (out, in) then b (out), as PyTorch does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ranklab {

struct ParamView {
  std::string name;  // "fc0.weight", "fc0.bias", ...
  size_t offset = 0;
  size_t size = 0;
};

struct BatchLoss {
  double loss_sum = 0;  // summed over the batch
  int64_t correct = 0;
};

class Mlp {
 public:
  // widths = {inputs, hidden..., classes}; weights drawn like PyTorch's Linear default,
  // U(-1/sqrt(in), 1/sqrt(in)), from `seed` (so every rank starts from the same model).
  Mlp(std::vector<int> widths, uint64_t seed);

  const std::vector<int>& widths() const { return widths_; }
  size_t parameterCount() const { return params_.size(); }
  float* params() { return params_.data(); }
  const float* params() const { return params_.data(); }
  float* grads() { return grads_.data(); }
  const std::vector<ParamView>& views() const { return views_; }

  // Forward pass over x (B, inputs); keeps activations for backward().
  BatchLoss forward(const float* x, const uint8_t* labels, int batch);
  void zeroGrads();
  // Adds d(mean loss)/d(params) of the last forward() into grads().
  void backward(const float* x, const uint8_t* labels, int batch);

  // Loss and accuracy over n samples in batches, no gradients.
  BatchLoss evaluate(const float* x, const uint8_t* labels, int64_t n, int batch);

 private:
  int layers() const { return static_cast<int>(widths_.size()) - 1; }
  float* weight(int l) { return params_.data() + views_[2 * l].offset; }
  float* bias(int l) { return params_.data() + views_[2 * l + 1].offset; }
  float* weightGrad(int l) { return grads_.data() + views_[2 * l].offset; }
  float* biasGrad(int l) { return grads_.data() + views_[2 * l + 1].offset; }
  void ensureBatch(int batch);

  std::vector<int> widths_;
  std::vector<float> params_;
  std::vector<float> grads_;
  std::vector<ParamView> views_;
  int batch_capacity_ = 0;
  std::vector<std::vector<float>> acts_;    // acts_[l]: output of layer l, (B, widths_[l+1])
  std::vector<std::vector<float>> deltas_;  // same shapes: dloss/d(output of layer l)
  std::vector<float> probs_;                // (B, classes)
};

}  // namespace ranklab
