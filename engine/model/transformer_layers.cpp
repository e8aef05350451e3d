#include "engine/model/transformer_layers.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace ranklab {
namespace {

constexpr float kEmbeddingStd = 0.02f;  // GPT-2's (and nanoGPT's) initialisation

Shape sequence(int length, int features) {
  return {length, 1, features};
}

}  // namespace

// ---- Embedding ----

Embedding::Embedding(std::string name, int length, int vocab, int width,
                     const ComputeDevice& device)
    : Layer(std::move(name), sequence(length, 1), sequence(length, width)),
      device_(device),
      length_(length),
      vocab_(vocab),
      width_(width) {
  if (length < 1 || vocab < 1 || width < 1)
    throw std::invalid_argument("Embedding: length, vocab and width must be at least 1");
}

std::string Embedding::describe() const {
  char text[80];
  std::snprintf(text, sizeof text, "Embedding(%d, %d) + Embedding(%d, %d)", vocab_, width_, length_,
                width_);
  return text;
}

std::vector<ParamTensor> Embedding::paramTensors() const {
  return {{"token", static_cast<size_t>(vocab_) * width_, vocab_},
          {"position", static_cast<size_t>(length_) * width_, length_}};
}

void Embedding::bind(float* params, float* grads) {
  const size_t tokens = static_cast<size_t>(vocab_) * width_;
  token_ = params;
  position_ = params ? params + tokens : nullptr;
  token_grad_ = grads;
  position_grad_ = grads ? grads + tokens : nullptr;
}

void Embedding::init(std::mt19937_64& rng) {
  // The token table, then the position table, from one stream.
  std::normal_distribution<float> normal(0.f, kEmbeddingStd);
  const size_t tokens = static_cast<size_t>(vocab_) * width_;
  std::vector<float> host(tokens + static_cast<size_t>(length_) * width_);
  for (float& value : host) value = normal(rng);
  device_.upload(token_, host.data(), tokens);
  device_.upload(position_, host.data() + tokens, host.size() - tokens);
}

void Embedding::forward(const float* x, float* y, int batch, const ForwardPass&) {
  device_.embeddingForward(x, token_, position_, y, batch, length_, width_, vocab_);
}

void Embedding::backward(const float* x, const float*, const float* dy, float*, int batch) {
  // Tied, the token table's gradient holds the head's share already: add to it.
  if (overwritesGradients() && !tied_)
    device_.fill(token_grad_, static_cast<size_t>(vocab_) * width_, 0.f);
  device_.embeddingBackward(x, dy, token_grad_, position_grad_, batch, length_, width_, vocab_,
                            !overwritesGradients());
}

// ---- LayerNorm ----

LayerNorm::LayerNorm(std::string name, Shape input, const ComputeDevice& device)
    : Layer(std::move(name), input, input),
      device_(device),
      width_(input.channels),
      statistics_(device),
      scratch_(device) {}

std::string LayerNorm::describe() const {
  char text[64];
  std::snprintf(text, sizeof text, "LayerNorm((%d,), eps=1e-05)", width_);
  return text;
}

std::vector<ParamTensor> LayerNorm::paramTensors() const {
  return {{"weight", static_cast<size_t>(width_)}, {"bias", static_cast<size_t>(width_)}};
}

void LayerNorm::bind(float* params, float* grads) {
  weight_ = params;
  bias_ = params ? params + width_ : nullptr;
  weight_grad_ = grads;
  bias_grad_ = grads ? grads + width_ : nullptr;
}

void LayerNorm::init(std::mt19937_64&) {
  device_.fill(weight_, width_, 1.f);
  device_.fill(bias_, width_, 0.f);
}

size_t LayerNorm::rows(int batch) const {
  return static_cast<size_t>(batch) * inputShape().height * inputShape().width;
}

void LayerNorm::forward(const float* x, float* y, int batch, const ForwardPass&) {
  rows_ = rows(batch);
  float* stats = statistics_.ensure<float>(2 * rows_);
  device_.layerNormForward(x, weight_, bias_, y, stats, stats + rows_, rows_, width_, kEps);
}

void LayerNorm::backward(const float* x, const float*, const float* dy, float* dx, int batch) {
  const size_t rows = this->rows(batch);
  const size_t scratch_floats = device_.layerNormScratchFloats(rows, width_);
  float* scratch = scratch_floats > 0 ? scratch_.ensure<float>(scratch_floats) : nullptr;
  // The statistics are the forward's, of the same batch.
  const float* stats = statistics_.data<float>();
  device_.layerNormBackward(x, weight_, stats, stats + rows_, dy, dx, weight_grad_, bias_grad_,
                            rows, width_, !overwritesGradients(), scratch);
}

// ---- Gelu ----

void Gelu::forward(const float* x, float* y, int batch, const ForwardPass& pass) {
  const size_t n = static_cast<size_t>(batch) * inputShape().size();
  device_.geluForward(x, y, pass.training ? slope_.ensure<float>(n) : nullptr, n);
}

void Gelu::backward(const float*, const float*, const float* dy, float* dx, int batch) {
  if (dx)
    device_.geluBackward(slope_.data<float>(), dy, dx,
                         static_cast<size_t>(batch) * inputShape().size());
}

// ---- CausalSelfAttention ----

CausalSelfAttention::CausalSelfAttention(std::string name, Shape input, int heads,
                                         const ComputeDevice& device)
    : Layer(std::move(name), input, sequence(input.height, input.channels / 3)),
      device_(device),
      length_(input.height),
      width_(input.channels / 3),
      heads_(heads),
      probs_(device),
      scratch_(device) {
  if (input.width != 1 || input.channels % 3 != 0)
    throw std::invalid_argument("CausalSelfAttention: its input is (length, 1, 3 * width), got " +
                                input.str());
  if (heads < 1 || width_ % heads != 0)
    throw std::invalid_argument("CausalSelfAttention: width " + std::to_string(width_) +
                                " does not split into " + std::to_string(heads) + " heads");
}

std::string CausalSelfAttention::describe() const {
  char text[64];
  std::snprintf(text, sizeof text, "CausalSelfAttention(width=%d, heads=%d)", width_, heads_);
  return text;
}

void CausalSelfAttention::forward(const float* x, float* y, int batch, const ForwardPass&) {
  float* probs = probs_.ensure<float>(static_cast<size_t>(batch) * heads_ * length_ * length_);
  device_.causalAttentionForward(x, y, probs, batch, length_, width_, heads_);
}

void CausalSelfAttention::backward(const float* x, const float*, const float* dy, float* dx,
                                   int batch) {
  if (!dx) return;
  const size_t scratch_floats = device_.attentionScratchFloats(heads_, length_);
  float* scratch = scratch_floats > 0 ? scratch_.ensure<float>(scratch_floats) : nullptr;
  device_.causalAttentionBackward(x, probs_.data<float>(), dy, dx, batch, length_, width_, heads_,
                                  scratch);
}

std::unique_ptr<Layer> makeTransformerLayer(const LayerRequest& r, const ComputeDevice& device) {
  switch (r.kind) {
    case LayerKind::kEmbedding:
      return std::make_unique<Embedding>(r.name, r.input.height, r.vocab, r.outputs, device);
    case LayerKind::kLayerNorm:
      return std::make_unique<LayerNorm>(r.name, r.input, device);
    case LayerKind::kGelu:
      return std::make_unique<Gelu>(r.name, r.input, device);
    case LayerKind::kCausalSelfAttention:
      return std::make_unique<CausalSelfAttention>(r.name, r.input, r.heads, device);
    default:
      throw std::invalid_argument(device.name() + " device: " + layerKindName(r.kind) +
                                  " is not a transformer layer");
  }
}

}  // namespace ranklab
