// The transformer's layers, written once over their device's passes (device_layer_ops.h:
// kernels/cpu/transformer.h on the CPU, kernels/cuda/transformer_kernels.h on a GPU): the
// token and position embedding, LayerNorm, the exact GELU and causal multi-head
// self-attention over a packed q|k|v row. A sample is a sequence of `length`
// positions, (length, 1, features); the GPT (models.cpp) chains them with the device's
// Linear layers in engine/model/transformer_block.h's blocks.
#pragma once

#include <memory>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/model/device_scratch.h"
#include "engine/model/layer.h"
#include "engine/model/layer_request.h"

namespace ranklab {

// The token table a tied output head reads and adds its gradient to (engine/model/
// transformer_block.h's TiedHead), as nanoGPT ties lm_head to wte.
class TokenTable {
 public:
  virtual ~TokenTable() = default;
  virtual const float* tokenWeights() const = 0;  // (vocab, width), this device's memory
  virtual float* tokenGradients() = 0;
  virtual int vocab() const = 0;
  // From now on the token table's gradient is added to, never written: the head tied to it
  // runs its backward first and writes (or adds) its share.
  virtual void tieHead() = 0;
};

// y (length, width) = wte[token] + wpe[position]: tensors "token" (vocab, width), drawn
// N(0, 0.02) as GPT-2's, and "position" (length, width), the same. Its input is token ids
// as floats, (length, 1, 1); it has no input gradient. The four layers here are written
// once, over their device's passes (device_layer_ops.h).
class Embedding : public Layer, public TokenTable {
 public:
  Embedding(std::string name, int length, int vocab, int width,
            const ComputeDevice& device = cpuDevice());
  std::string describe() const override;
  std::vector<ParamTensor> paramTensors() const override;
  size_t macsPerPosition() const override { return static_cast<size_t>(width_); }  // a lookup
  void bind(float* params, float* grads) override;
  void init(std::mt19937_64& rng) override;  // drawn on the host, uploaded
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;

  const float* tokenWeights() const override { return token_; }
  float* tokenGradients() override { return token_grad_; }
  int vocab() const override { return vocab_; }
  void tieHead() override { tied_ = true; }
  bool usedOutsideItsTurn() const override { return true; }  // the table, read by the head

 private:
  const ComputeDevice& device_;
  int length_, vocab_, width_;
  bool tied_ = false;
  float *token_ = nullptr, *position_ = nullptr, *token_grad_ = nullptr, *position_grad_ = nullptr;
};

// LayerNorm over each position's features (eps 1e-5, PyTorch's): "weight" (ones) and "bias"
// (zeros).
class LayerNorm : public Layer {
 public:
  static constexpr float kEps = 1e-5f;  // PyTorch's nn.LayerNorm default
  LayerNorm(std::string name, Shape input, const ComputeDevice& device = cpuDevice());
  std::string describe() const override;
  std::vector<ParamTensor> paramTensors() const override;
  void bind(float* params, float* grads) override;
  void init(std::mt19937_64& rng) override;
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  size_t keptBytes() const override { return statistics_.usedBytes(); }

 private:
  size_t rows(int batch) const;
  const ComputeDevice& device_;
  int width_;
  float *weight_ = nullptr, *bias_ = nullptr, *weight_grad_ = nullptr, *bias_grad_ = nullptr;
  size_t rows_ = 0;           // of the last forward
  DeviceScratch statistics_;  // its mean, then its rstd, per row
  DeviceScratch scratch_;     // backward's, where the device needs one
};

// The exact GELU, PyTorch's nn.GELU().
class Gelu : public Layer {
 public:
  Gelu(std::string name, Shape input, const ComputeDevice& device = cpuDevice())
      : Layer(std::move(name), input, input), device_(device), slope_(device) {}
  std::string describe() const override { return "GELU()"; }
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  size_t keptBytes() const override { return slope_.usedBytes(); }

 private:
  const ComputeDevice& device_;
  DeviceScratch slope_;  // GELU'(x) of the last training forward
};

// Causal self-attention of `heads` heads: input (length, 1, 3 * width), q|k|v per position
// as nanoGPT's c_attn writes them; output (length, 1, width), the heads side by side. No
// parameters (the projections are the block's Linear layers).
class CausalSelfAttention : public Layer {
 public:
  CausalSelfAttention(std::string name, Shape input, int heads,
                      const ComputeDevice& device = cpuDevice());
  std::string describe() const override;
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  size_t keptBytes() const override { return probs_.usedBytes(); }
  size_t workspaceBytes() const override { return scratch_.usedBytes(); }

 private:
  const ComputeDevice& device_;
  int length_, width_, heads_;
  DeviceScratch probs_;    // (B, heads, length, length) of the last forward
  DeviceScratch scratch_;  // backward's, where the device needs one
};

// The transformer's layers by kind on `device` (makeLayerOn's transformer cases).
std::unique_ptr<Layer> makeTransformerLayer(const LayerRequest& request,
                                            const ComputeDevice& device);

}  // namespace ranklab
