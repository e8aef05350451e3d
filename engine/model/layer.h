// A layer is a forward/backward pair over batches of samples. Conventions:
// - a sample is stored channels-last, (H, W, C); a feature vector of n values is (1, 1, n);
//   a batch is (B, H, W, C), row-major, so (B, features) for flat layers;
// - parameters and their gradients live in slices of the network's two flat buffers,
//   handed to the layer by bind(); tensors are in PyTorch's order and layout;
// - backward ADDS into parameter gradients (or WRITES them after overwriteGradients(true):
//   the first backward after a zeroGrads() needs no zeroed buffer) and WRITES the input
//   gradient dx;
// - backward is for the batch of the latest forward (a layer may keep what it needs from
//   it: a dropout mask, max-pool winners, a padded input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/model/layer_request.h"
#include "engine/model/shape.h"
#include "engine/model/tensor_slice.h"

namespace ranklab::kernels {
enum class Precision;  // kernels/cpu/mixed_gemm.h
}

namespace ranklab {

// What a forward pass is for: training draws dropout masks, evaluation does not.
struct ForwardPass {
  bool training = true;
  uint64_t dropout_key = 0;  // differs per rank and per training step
};

struct ParamTensor {
  std::string suffix;  // "weight", "bias"
  size_t size = 0;
  int rows = 0;       // a matrix's first dimension (a weight's outputs); 0: a vector
  TensorPart part{};  // a tensor-parallel slice's part of the whole model's tensor
};

class Layer {
 public:
  Layer(std::string name, Shape input, Shape output)
      : name_(std::move(name)), input_(input), output_(output) {}
  virtual ~Layer() = default;

  const std::string& name() const { return name_; }  // "fc0", "conv1": prefixes the views
  // What it was made from (makeLayerOn), so a part of a model can be built again by kind
  // and shape, not by name; null for a layer no device table makes (a GPT's block, the
  // slices' f and g).
  const LayerRequest* request() const { return request_ ? &*request_ : nullptr; }
  void setRequest(LayerRequest request) { request_ = std::move(request); }
  Shape inputShape() const { return input_; }
  Shape outputShape() const { return output_; }
  virtual std::string describe() const = 0;  // "Linear(784, 256)", PyTorch's wording

  // The parameter tensors it owns, in the order they sit in the flat buffer.
  virtual std::vector<ParamTensor> paramTensors() const { return {}; }
  // Multiply-adds of one forward per output position, for balancing pipeline stages: a
  // weight matrix's size (its first tensor) unless the layer knows better.
  virtual size_t macsPerPosition() const {
    const std::vector<ParamTensor> tensors = paramTensors();
    return tensors.empty() ? 0 : tensors.front().size;
  }
  // Points the layer at its slices of the flat parameter and gradient buffers.
  virtual void bind(float* /*params*/, float* /*grads*/) {}
  // Draws parameters like PyTorch's default, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), weight first.
  virtual void init(std::mt19937_64& /*rng*/) {}
  // Instead of init: its values are given (a part of a model, its values taken from the
  // whole model's draw); it drops what init would have read.
  virtual void valuesGiven() {}

  // The precision of the layer's matrix products (AMP); layers without any ignore it.
  virtual void setPrecision(kernels::Precision /*precision*/) {}

  // Offered the ReLU that follows it: true when this layer applies that ReLU itself from now
  // on, and the network runs the pair as one (forward writes the ReLU's output; backward
  // gets the ReLU's output and output gradient as y and dy), saving the ReLU's passes.
  virtual bool absorbFollowingRelu() { return false; }

  // Memory it keeps from its last forward for its backward, besides its output (which the
  // network keeps): a LayerNorm's row statistics, the attention's probabilities, a dropout's
  // mask. The memory ledger's activations are the outputs plus this.
  virtual size_t keptBytes() const { return 0; }
  // Memory its backward works in and keeps between steps (a block's gradient buffers).
  virtual size_t workspaceBytes() const { return 0; }

  // True for a layer whose tensors are read or added to outside its own turn in a pass (a
  // GPT's token table: the tied head reads it as the last layer and writes its gradient
  // first; under a pipeline the other stage's copy adds to it after backward). ZeRO 2 and 3
  // keep such a layer's tensors for the whole step rather than in the one-layer scratch.
  virtual bool usedOutsideItsTurn() const { return false; }

  // True for a layer whose passes talk to other ranks (tensor parallelism's f and g): the
  // device mostly waits in them, so a device trace leaves them out.
  virtual bool communicates() const { return false; }

  // Whether backward() writes the parameter gradients instead of adding to them.
  void overwriteGradients(bool overwrite) { overwrite_gradients_ = overwrite; }

  // x (B, input) -> y (B, output)
  virtual void forward(const float* x, float* y, int batch, const ForwardPass& pass) = 0;
  // dy (B, output) -> dx (B, input), dx null when no one needs it; parameter grads +=.
  virtual void backward(const float* x, const float* y, const float* dy, float* dx, int batch) = 0;

 protected:
  bool overwritesGradients() const { return overwrite_gradients_; }

 private:
  bool overwrite_gradients_ = false;
  std::optional<LayerRequest> request_;
  std::string name_;
  Shape input_;
  Shape output_;
};

// A model's layers in order, as a Network takes them.
using ModelLayers = std::vector<std::unique_ptr<Layer>>;

}  // namespace ranklab
