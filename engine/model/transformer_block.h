// A GPT's block and its tied output head, made of the device's own layers (its table:
// Linear, LayerNorm, CausalSelfAttention, GELU, Dropout) and its memory operations, so they
// compute wherever those do. As nanoGPT's Block: x + attn(ln_1(x)), then + mlp(ln_2(x)),
// attn = c_proj(attention(c_attn(x))), mlp = c_proj(gelu(c_fc(x))), a dropout after each
// c_proj (model.dropout).
#pragma once

#include <memory>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/model/layer.h"
#include "engine/model/transformer_layers.h"

namespace ranklab {

class TensorGroup;

// Sizes of a GPT (model.* keys).
struct GptShape {
  int vocab = 256;
  int context = 64;  // positions per sample
  int width = 128;
  int heads = 4;
  int blocks = 4;
  float dropout = 0.f;
};

// Split over `slices` (Megatron's tensor parallelism), a block holds heads / t of the
// attention's heads (c_attn column-parallel: its q, k and v rows of those heads; attn.c_proj
// row-parallel) and 4 width / t of the MLP (c_fc column-, c_proj row-parallel); its
// LayerNorms are whole. Each branch sums the slices' partial outputs after its c_proj (g)
// and their parts of its input gradient before its LayerNorm (f): two all-reduces of
// (rows, width) forward and two backward.
// Under sequence parallelism (slices->sequenceParallel(), engine/model/sequence_parallel.h)
// its input and output are the slice's rows alone, and so are its LayerNorms', residuals'
// and their buffers: each branch all-gathers its LayerNorm's rows before c_attn or c_fc
// and reduce-scatters c_proj's partial outputs (g becomes a reduce-scatter, f an
// all-gather); backward all-gathers the output gradient, re-gathers the LayerNorm's rows
// (kept split, as Korthikanti et al. do) and reduce-scatters the input gradient. The
// LayerNorms' parameter gradients, each slice's from its own rows, are summed over the
// slices after backward. Its sums are the plain split's bits; only those gradients' order
// of additions differs.
class TransformerBlock : public Layer {
 public:
  // The block `name` ("h0") of a GPT of `shape`, on `device`; with `slices`, this rank's
  // slice of it (`slices` outlives it; its size divides shape.heads).
  TransformerBlock(std::string name, const GptShape& shape, const ComputeDevice& device,
                   TensorGroup* slices = nullptr);
  const GptShape& shape() const { return shape_; }
  // Sequence parallelism: its input and output are the slice's rows alone.
  bool splitsRows() const { return sequence_; }
  // Its four Linears' (12 width^2, over the slices) and the causal attention's (about
  // context * width: half of QK^T's and of the weighted sum's).
  size_t macsPerPosition() const override;
  std::string describe() const override;
  // Its layers' tensors, each named as nanoGPT's state_dict: "ln_1.weight", "attn.c_attn.weight"...
  std::vector<ParamTensor> paramTensors() const override;
  void bind(float* params, float* grads) override;
  // GPT-2's: Linear weights N(0, 0.02), each c_proj's N(0, 0.02 / sqrt(2 * blocks)), biases 0;
  // LayerNorms ones and zeros.
  void init(std::mt19937_64& rng) override;
  void setPrecision(kernels::Precision precision) override;
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  // Its forward buffers and its layers' kept state (docs/memory.md derives the formula).
  size_t keptBytes() const override;
  size_t workspaceBytes() const override;  // its gradient buffers

 private:
  struct Part {
    std::string name;  // "attn.c_attn"
    std::unique_ptr<Layer> layer;
    float* params = nullptr;  // bound slice (init)
    float init_std = 0;       // a Linear's weight draw; 0: the layer's own init
  };
  Layer& add(const std::string& name, const LayerRequest& request, float init_std = 0);
  void ensureBatch(int batch);
  float* buffer(size_t index) { return buffers_[index]->data(); }
  // Megatron's g forward and f backward: a branch's partial (rows, width) summed over the
  // slices; under sequence parallelism reduce-scattered, and this slice's rows returned.
  const float* sumBranch(float* partial, int batch, bool in_backward);
  // The whole rows of `held` (this slice's rows under sequence parallelism, all-gathered
  // into the scratch `whole`; otherwise held itself).
  const float* wholeRows(const float* held, float* whole, int batch, bool in_backward);
  // Under sequence parallelism: the LayerNorms' gradients, each from this slice's rows,
  // summed over the slices into the network's gradient buffer.
  void sumLayerNormGradients();

  const ComputeDevice& device_;
  GptShape shape_;
  TensorGroup* slices_;
  int parts_of_ = 1;       // slices the heads and the MLP are split into
  bool sequence_ = false;  // sequence parallelism: the block's rows are the slice's alone
  // Sequence parallelism's LayerNorm gradients (ln_1's, then ln_2's) before their sum, and
  // where they go in the network's gradient buffer.
  std::unique_ptr<DeviceBuffer> ln_grads_;
  float *ln_1_grads_ = nullptr, *ln_2_grads_ = nullptr;
  std::vector<Part> parts_;
  Layer *ln_1_, *c_attn_, *attn_, *attn_proj_, *ln_2_, *c_fc_, *gelu_, *mlp_proj_;
  Layer *attn_drop_ = nullptr, *mlp_drop_ = nullptr;  // none without dropout
  int batch_ = 0;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;  // activations and their gradients
};

// logits (length, vocab) = x (length, width) . token table^T: nanoGPT's lm_head with its
// weight tied to the embedding's (`table`), which owns it; its gradient goes into the
// table's. No parameters of its own. As a copy (Megatron's under a pipeline, where the head
// and the embedding sit on different stages): a tensor "weight" of its own, drawn as the
// table's values (the table is only read at init), its gradient its own; the trainer sums
// the two gradients so the copies stay equal.
class TiedHead : public Layer {
 public:
  enum class Tie { kShared, kCopy };
  TiedHead(std::string name, Shape input, TokenTable& table, const std::string& table_name,
           const ComputeDevice& device, Tie tie = Tie::kShared);
  std::string describe() const override;
  std::vector<ParamTensor> paramTensors() const override;
  size_t macsPerPosition() const override {
    return static_cast<size_t>(vocab_) * inputShape().channels;
  }
  void bind(float* params, float* grads) override;
  void init(std::mt19937_64& rng) override;
  void valuesGiven() override;  // a copy given its values no longer reads the table
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  // A copy's gradient is summed with the embedding's after backward.
  bool usedOutsideItsTurn() const override { return copied_; }

 private:
  const float* weights() const { return copy_ ? copy_ : table_->tokenWeights(); }
  float* gradients() { return copy_ ? copy_grad_ : table_->tokenGradients(); }

  TokenTable* table_;  // read at init alone when copied
  std::string table_name_;
  const ComputeDevice& device_;
  bool copied_;
  int vocab_;
  float *copy_ = nullptr, *copy_grad_ = nullptr;
};

}  // namespace ranklab
