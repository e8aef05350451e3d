#include "engine/model/transformer_block.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "engine/model/sequence_parallel.h"
#include "engine/model/tensor_group.h"

namespace ranklab {
namespace {

constexpr float kInitStd = 0.02f;  // GPT-2's

Shape sequence(int length, int features) {
  return {length, 1, features};
}

Shape row(int features) {
  return {1, 1, features};
}

// The rows a block of `shape` takes in and gives out: under sequence parallelism the
// slice's share of them.
Shape heldRows(const GptShape& shape, const TensorGroup* slices) {
  const Shape whole = sequence(shape.context, shape.width);
  return slices && slices->sequenceParallel() ? sequenceSliceOf(whole, slices->size()) : whole;
}

// The block's buffers, each rows * (its multiple of width) floats; a slice's q|k|v, attention
// and MLP buffers hold its part alone. The forward's first, the backward's from kGradA.
// Under sequence parallelism the LayerNorms' and residual's (kHeldRows) hold the slice's
// rows alone, the c_projs' partial outputs go to kGradA (the forward's scratch too, with
// kGradB for a LayerNorm's gathered rows), so kAttnProj and kMlpProj are not made.
enum Buffer : size_t {
  kLn1,
  kQkv,
  kAttn,
  kAttnProj,
  kAttnDrop,
  kResidual,
  kLn2,
  kFc,
  kGelu,
  kMlpProj,
  kMlpDrop,
  kGradA,
  kGradB,
  kGradC,
  kGrad4A,
  kGrad4B,
  kGrad3,
  kBuffers
};
constexpr int kWidths[kBuffers] = {1, 3, 1, 1, 1, 1, 1, 4, 4, 1, 1, 1, 1, 1, 4, 4, 3};
constexpr bool kSliced[kBuffers] = {false, true,  true,  false, false, false, false, true, true,
                                    false, false, false, false, false, true,  true,  true};
constexpr bool kHeldRows[kBuffers] = {true,  false, false, false, false, true,  true,  false, false,
                                      false, false, false, false, true,  false, false, false};

}  // namespace

TransformerBlock::TransformerBlock(std::string name, const GptShape& shape,
                                   const ComputeDevice& device, TensorGroup* slices)
    : Layer(std::move(name), heldRows(shape, slices), heldRows(shape, slices)),
      device_(device),
      shape_(shape),
      slices_(slices),
      parts_of_(slices ? slices->size() : 1),
      sequence_(slices && slices->sequenceParallel()) {
  if (shape.heads % parts_of_ != 0) {
    throw std::invalid_argument(this->name() + " has " + std::to_string(shape.heads) +
                                " heads, which parallel.tensor = " + std::to_string(parts_of_) +
                                " does not divide");
  }
  if (sequence_ && shape.dropout > 0.f) {
    throw std::invalid_argument(this->name() +
                                ": sequence parallelism splits models without dropout, as "
                                "tensor parallelism does; use model.dropout = 0");
  }
  const int c = shape.width, t = shape.context, part = c / parts_of_;
  const Shape held = inputShape();  // the LayerNorms' rows
  // Megatron's split: c_attn (its q, k and v alike) and c_fc by their outputs, each c_proj
  // by its inputs (its bias added once, by the first slice, before the sum).
  auto linear = [&](Shape input, int outputs, SliceSplit split, int groups = 1) {
    LayerRequest request{LayerKind::kLinear, "", input, outputs};
    request.slice = {split, slices ? slices->rank() : 0, parts_of_, groups};
    return request;
  };
  // GPT-2's: each c_proj, which adds to the residual stream, drawn 1/sqrt(2 blocks) smaller.
  const float proj_std = kInitStd / std::sqrt(2.f * static_cast<float>(shape.blocks));
  ln_1_ = &add("ln_1", {LayerKind::kLayerNorm, "", held});
  c_attn_ = &add("attn.c_attn", linear(row(c), 3 * part, SliceSplit::kOutputs, 3), kInitStd);
  LayerRequest attention{LayerKind::kCausalSelfAttention, "", sequence(t, 3 * part)};
  attention.heads = shape.heads / parts_of_;
  attn_ = &add("attn", attention);
  attn_proj_ = &add("attn.c_proj", linear(row(part), c, SliceSplit::kInputs), proj_std);
  ln_2_ = &add("ln_2", {LayerKind::kLayerNorm, "", held});
  c_fc_ = &add("mlp.c_fc", linear(row(c), 4 * part, SliceSplit::kOutputs), kInitStd);
  gelu_ = &add("mlp.gelu", {LayerKind::kGelu, "", sequence(t, 4 * part)});
  mlp_proj_ = &add("mlp.c_proj", linear(row(4 * part), c, SliceSplit::kInputs), proj_std);
  if (shape.dropout > 0.f) {
    LayerRequest drop{LayerKind::kDropout, "", sequence(t, c)};
    drop.dropout = shape.dropout;
    attn_drop_ = &add("attn.resid_dropout", drop);
    mlp_drop_ = &add("mlp.dropout", drop);
  }
  if (sequence_) ln_grads_ = device.allocate(4 * static_cast<size_t>(c));
}

Layer& TransformerBlock::add(const std::string& name, const LayerRequest& request, float init_std) {
  LayerRequest named = request;
  named.name = this->name() + "." + name;
  parts_.push_back({name, device_.makeLayer(named), nullptr, init_std});
  return *parts_.back().layer;
}

std::string TransformerBlock::describe() const {
  char text[96];
  if (parts_of_ == 1) {
    std::snprintf(text, sizeof text, "Block(width=%d, heads=%d, mlp=%d, dropout=%g)", shape_.width,
                  shape_.heads, 4 * shape_.width, shape_.dropout);
  } else {
    std::snprintf(text, sizeof text, "Block(width=%d, heads=%d of %d, mlp=%d of %d, dropout=%g%s)",
                  shape_.width, shape_.heads / parts_of_, shape_.heads,
                  4 * shape_.width / parts_of_, 4 * shape_.width, shape_.dropout,
                  sequence_ ? ", rows split" : "");
  }
  return text;
}

size_t TransformerBlock::macsPerPosition() const {
  const size_t c = static_cast<size_t>(shape_.width), t = static_cast<size_t>(shape_.context);
  // Per position it gives out: under sequence parallelism a slice gives out 1/t of them.
  const size_t given = static_cast<size_t>(shape_.context / outputShape().height);
  return (12 * c * c + t * c) / static_cast<size_t>(parts_of_) * given;
}

std::vector<ParamTensor> TransformerBlock::paramTensors() const {
  std::vector<ParamTensor> tensors;
  for (const Part& part : parts_)
    for (const ParamTensor& t : part.layer->paramTensors())
      tensors.push_back({part.name + "." + t.suffix, t.size, t.rows, t.part});
  return tensors;
}

void TransformerBlock::bind(float* params, float* grads) {
  size_t offset = 0;
  const size_t ln_floats = 2 * static_cast<size_t>(shape_.width);
  for (Part& part : parts_) {
    part.params = params + offset;
    float* own_grads = grads ? grads + offset : nullptr;
    // Sequence parallelism: a LayerNorm's gradient is summed over the slices before it
    // lands in its place (sumLayerNormGradients).
    if (sequence_ && (part.layer.get() == ln_1_ || part.layer.get() == ln_2_)) {
      const bool first = part.layer.get() == ln_1_;
      (first ? ln_1_grads_ : ln_2_grads_) = own_grads;
      own_grads = ln_grads_->data() + (first ? 0 : ln_floats);
    }
    part.layer->bind(params + offset, own_grads);
    for (const ParamTensor& t : part.layer->paramTensors()) offset += t.size;
  }
}

void TransformerBlock::init(std::mt19937_64& rng) {
  for (Part& part : parts_) {
    if (part.init_std == 0) {
      part.layer->init(rng);  // LayerNorm: ones and zeros
      continue;
    }
    // A Linear: weight N(0, std), bias 0, drawn here and uploaded to the device.
    const std::vector<ParamTensor> tensors = part.layer->paramTensors();
    std::normal_distribution<float> normal(0.f, part.init_std);
    std::vector<float> values(tensors[0].size + tensors[1].size, 0.f);
    for (size_t i = 0; i < tensors[0].size; ++i) values[i] = normal(rng);
    device_.upload(part.params, values.data(), values.size());
  }
}

void TransformerBlock::setPrecision(kernels::Precision precision) {
  for (Layer* linear : {c_attn_, attn_proj_, c_fc_, mlp_proj_}) linear->setPrecision(precision);
}

void TransformerBlock::ensureBatch(int batch) {
  if (batch <= batch_) return;
  const size_t rows = static_cast<size_t>(batch) * shape_.context;
  const size_t held_rows = static_cast<size_t>(batch) * inputShape().height;
  buffers_.clear();
  for (size_t i = 0; i < kBuffers; ++i) {
    // Without dropout the branches' outputs are added as they are: no dropout buffers.
    const bool no_dropout = (i == kAttnDrop || i == kMlpDrop) && !attn_drop_;
    const bool partial_in_scratch = (i == kAttnProj || i == kMlpProj) && sequence_;
    if (no_dropout || partial_in_scratch) {
      buffers_.push_back(nullptr);
      continue;
    }
    const int width = kSliced[i] ? shape_.width / parts_of_ : shape_.width;
    buffers_.push_back(device_.allocate((kHeldRows[i] ? held_rows : rows) * kWidths[i] * width));
  }
  batch_ = batch;
}

size_t TransformerBlock::keptBytes() const {
  size_t floats = 0;
  for (size_t i = 0; i < kGradA; ++i) floats += buffers_[i] ? buffers_[i]->size() : 0;
  size_t bytes = floats * sizeof(float);
  for (const Part& part : parts_) bytes += part.layer->keptBytes();
  return bytes;
}

size_t TransformerBlock::workspaceBytes() const {
  size_t floats = ln_grads_ ? ln_grads_->size() : 0;
  for (size_t i = kGradA; i < buffers_.size(); ++i) floats += buffers_[i]->size();
  return floats * sizeof(float);
}

const float* TransformerBlock::sumBranch(float* partial, int batch, bool in_backward) {
  const size_t whole = static_cast<size_t>(batch) * shape_.context * shape_.width;
  if (!slices_) return partial;
  if (!sequence_) {
    slices_->sum(partial, whole, in_backward, device_);
    return partial;
  }
  slices_->reduceScatter(partial, whole, in_backward, device_);
  return partial + slices_->ownedPart(whole).begin;
}

const float* TransformerBlock::wholeRows(const float* held, float* whole, int batch,
                                         bool in_backward) {
  if (!sequence_) return held;
  const size_t floats = static_cast<size_t>(batch) * shape_.context * shape_.width;
  slices_->allGatherFrom(held, whole, floats, in_backward, device_);
  return whole;
}

void TransformerBlock::sumLayerNormGradients() {
  const size_t ln_floats = 2 * static_cast<size_t>(shape_.width);
  slices_->sum(ln_grads_->data(), 2 * ln_floats, true, device_);
  const std::pair<float*, const float*> places[] = {{ln_1_grads_, ln_grads_->data()},
                                                    {ln_2_grads_, ln_grads_->data() + ln_floats}};
  for (const auto& [grads, summed] : places) {
    if (!grads) continue;
    if (overwritesGradients())
      device_.copy(grads, summed, ln_floats);
    else
      device_.add(grads, summed, ln_floats);
  }
}

void TransformerBlock::forward(const float* x, float* y, int batch, const ForwardPass& pass) {
  ensureBatch(batch);
  const int rows = batch * shape_.context;  // the Linears' and the attention's: whole rows
  const size_t n = static_cast<size_t>(batch) * inputShape().size();  // the held rows'
  ForwardPass attn_pass = pass, mlp_pass = pass;
  attn_pass.dropout_key = pass.dropout_key ^ 0x2545f4914f6cdd1dULL;
  mlp_pass.dropout_key = pass.dropout_key ^ 0x9e3779b97f4a7c15ULL;
  // Sequence parallelism's c_proj partials go to a scratch, reduce-scattered from there.
  float* attn_partial = sequence_ ? buffer(kGradA) : buffer(kAttnProj);
  float* mlp_partial = sequence_ ? buffer(kGradA) : buffer(kMlpProj);
  // x + attn(ln_1(x))
  ln_1_->forward(x, buffer(kLn1), batch, pass);
  c_attn_->forward(wholeRows(buffer(kLn1), buffer(kGradB), batch, false), buffer(kQkv), rows, pass);
  attn_->forward(buffer(kQkv), buffer(kAttn), batch, pass);
  attn_proj_->forward(buffer(kAttn), attn_partial, rows, pass);
  const float* attn_out = sumBranch(attn_partial, batch, false);
  if (attn_drop_) {
    attn_drop_->forward(attn_out, buffer(kAttnDrop), batch, attn_pass);
    attn_out = buffer(kAttnDrop);
  }
  device_.copy(buffer(kResidual), x, n);
  device_.add(buffer(kResidual), attn_out, n);
  // + mlp(ln_2(...))
  ln_2_->forward(buffer(kResidual), buffer(kLn2), batch, pass);
  c_fc_->forward(wholeRows(buffer(kLn2), buffer(kGradB), batch, false), buffer(kFc), rows, pass);
  gelu_->forward(buffer(kFc), buffer(kGelu), batch, pass);
  mlp_proj_->forward(buffer(kGelu), mlp_partial, rows, pass);
  const float* mlp_out = sumBranch(mlp_partial, batch, false);
  if (mlp_drop_) {
    mlp_drop_->forward(mlp_out, buffer(kMlpDrop), batch, mlp_pass);
    mlp_out = buffer(kMlpDrop);
  }
  device_.copy(y, buffer(kResidual), n);
  device_.add(y, mlp_out, n);
}

void TransformerBlock::backward(const float* x, const float*, const float* dy, float* dx,
                                int batch) {
  for (Part& part : parts_) part.layer->overwriteGradients(overwritesGradients());
  // Sequence parallelism's LayerNorms write their scratch, summed and then added in place.
  if (sequence_)
    for (Layer* norm : {ln_1_, ln_2_}) norm->overwriteGradients(true);
  const int rows = batch * shape_.context;
  const size_t n = static_cast<size_t>(batch) * inputShape().size();
  // kGradA takes whole rows gathered (sequence parallelism), kGradB each c_fc's and c_attn's
  // input gradient (partial over the slices until summed).
  // The MLP's branch: dy through its dropout, c_proj, GELU, c_fc and ln_2 ...
  const float* d_mlp = dy;
  if (mlp_drop_) {
    mlp_drop_->backward(buffer(kMlpProj), buffer(kMlpDrop), dy, buffer(kGradA), batch);
    d_mlp = buffer(kGradA);
  }
  mlp_proj_->backward(buffer(kGelu), nullptr, wholeRows(d_mlp, buffer(kGradA), batch, true),
                      buffer(kGrad4A), rows);
  gelu_->backward(buffer(kFc), buffer(kGelu), buffer(kGrad4A), buffer(kGrad4B), batch);
  c_fc_->backward(wholeRows(buffer(kLn2), buffer(kGradA), batch, true), buffer(kFc),
                  buffer(kGrad4B), buffer(kGradB), rows);
  const float* d_ln_2 = sumBranch(buffer(kGradB), batch, true);
  ln_2_->backward(buffer(kResidual), buffer(kLn2), d_ln_2, buffer(kGradC), batch);
  // ... plus the residual's: the gradient at the attention's sum.
  device_.add(buffer(kGradC), dy, n);
  const float* d_attn = buffer(kGradC);
  if (attn_drop_) {
    attn_drop_->backward(buffer(kAttnProj), buffer(kAttnDrop), d_attn, buffer(kGradA), batch);
    d_attn = buffer(kGradA);
  }
  attn_proj_->backward(buffer(kAttn), nullptr, wholeRows(d_attn, buffer(kGradA), batch, true),
                       buffer(kGradB), rows);
  attn_->backward(buffer(kQkv), buffer(kAttn), buffer(kGradB), buffer(kGrad3), batch);
  c_attn_->backward(wholeRows(buffer(kLn1), buffer(kGradA), batch, true), buffer(kQkv),
                    buffer(kGrad3), buffer(kGradB), rows);
  const float* d_ln_1 = sumBranch(buffer(kGradB), batch, true);
  ln_1_->backward(x, buffer(kLn1), d_ln_1, dx, batch);
  if (dx) device_.add(dx, buffer(kGradC), n);
  if (sequence_) sumLayerNormGradients();
}

// ---- TiedHead ----

TiedHead::TiedHead(std::string name, Shape input, TokenTable& table, const std::string& table_name,
                   const ComputeDevice& device, Tie tie)
    : Layer(std::move(name), input, sequence(input.height, table.vocab())),
      table_(&table),
      table_name_(table_name),
      device_(device),
      copied_(tie == Tie::kCopy),
      vocab_(table.vocab()) {
  if (!copied_) table_->tieHead();
}

std::string TiedHead::describe() const {
  char text[128];
  std::snprintf(text, sizeof text, "Linear(%d, %d, bias=False, weight=%s%s)", inputShape().channels,
                vocab_, copied_ ? "a copy of " : "", table_name_.c_str());
  return text;
}

std::vector<ParamTensor> TiedHead::paramTensors() const {
  if (!copied_) return {};
  return {{"weight", static_cast<size_t>(vocab_) * inputShape().channels, vocab_}};
}

void TiedHead::bind(float* params, float* grads) {
  if (!copied_) return;
  copy_ = params;
  copy_grad_ = grads;
}

void TiedHead::init(std::mt19937_64&) {
  // A stage taken from the whole model is made without the table, and given its values.
  if (!copied_ || !table_) return;
  device_.copy(copy_, table_->tokenWeights(), static_cast<size_t>(vocab_) * inputShape().channels);
  table_ = nullptr;  // a stage that keeps the head alone drops the embedding
}

void TiedHead::valuesGiven() {
  if (copied_) table_ = nullptr;  // a stage that keeps the head alone drops the embedding
}

void TiedHead::forward(const float* x, float* y, int batch, const ForwardPass&) {
  const int rows = batch * inputShape().height, width = inputShape().channels;
  device_.gemm(kernels::Trans::kNo, kernels::Trans::kYes, rows, vocab_, width, 1.f, x, width,
               weights(), width, 0.f, y, vocab_);
}

void TiedHead::backward(const float* x, const float*, const float* dy, float* dx, int batch) {
  const int rows = batch * inputShape().height, width = inputShape().channels;
  const int vocab = vocab_;
  // d table (vocab, width) (+)= dy^T . x; dx = dy . table
  device_.gemm(kernels::Trans::kYes, kernels::Trans::kNo, vocab, width, rows, 1.f, dy, vocab, x,
               width, overwritesGradients() ? 0.f : 1.f, gradients(), width);
  if (dx) {
    device_.gemm(kernels::Trans::kNo, kernels::Trans::kNo, rows, width, vocab, 1.f, dy, vocab,
                 weights(), width, 0.f, dx, width);
  }
}

}  // namespace ranklab
