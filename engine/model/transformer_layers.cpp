#include "engine/model/transformer_layers.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "kernels/cpu/transformer.h"

namespace ranklab {
namespace {

constexpr float kEmbeddingStd = 0.02f;  // GPT-2's (and nanoGPT's) initialisation

Shape sequence(int length, int features) {
  return {length, 1, features};
}

}  // namespace

// ---- Embedding ----

Embedding::Embedding(std::string name, int length, int vocab, int width)
    : Layer(std::move(name), sequence(length, 1), sequence(length, width)),
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
  position_ = params + tokens;
  token_grad_ = grads;
  position_grad_ = grads + tokens;
}

void Embedding::draw(std::mt19937_64& rng, float* token, float* position) const {
  std::normal_distribution<float> normal(0.f, kEmbeddingStd);
  for (size_t i = 0; i < static_cast<size_t>(vocab_) * width_; ++i) token[i] = normal(rng);
  for (size_t i = 0; i < static_cast<size_t>(length_) * width_; ++i) position[i] = normal(rng);
}

void Embedding::init(std::mt19937_64& rng) {
  draw(rng, token_, position_);
}

void Embedding::forward(const float* x, float* y, int batch, const ForwardPass&) {
  kernels::embeddingForward(x, token_, position_, y, batch, length_, width_, vocab_);
}

void Embedding::backward(const float* x, const float*, const float* dy, float*, int batch) {
  // Tied, the token table's gradient holds the head's share already: add to it.
  if (overwritesGradients() && !tied_)
    std::fill(token_grad_, token_grad_ + static_cast<size_t>(vocab_) * width_, 0.f);
  kernels::embeddingBackward(x, dy, token_grad_, position_grad_, batch, length_, width_,
                             !overwritesGradients());
}

// ---- LayerNorm ----

LayerNorm::LayerNorm(std::string name, Shape input)
    : Layer(std::move(name), input, input), width_(input.channels) {}

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
  bias_ = params + width_;
  weight_grad_ = grads;
  bias_grad_ = grads + width_;
}

void LayerNorm::init(std::mt19937_64&) {
  std::fill(weight_, weight_ + width_, 1.f);
  std::fill(bias_, bias_ + width_, 0.f);
}

size_t LayerNorm::rows(int batch) const {
  return static_cast<size_t>(batch) * inputShape().height * inputShape().width;
}

void LayerNorm::forward(const float* x, float* y, int batch, const ForwardPass&) {
  mean_.resize(rows(batch));
  rstd_.resize(rows(batch));
  kernels::layerNormForward(x, weight_, bias_, y, mean_.data(), rstd_.data(), rows(batch), width_,
                            kEps);
}

void LayerNorm::backward(const float* x, const float*, const float* dy, float* dx, int batch) {
  kernels::layerNormBackward(x, weight_, mean_.data(), rstd_.data(), dy, dx, weight_grad_,
                             bias_grad_, rows(batch), width_, !overwritesGradients());
}

// ---- Gelu ----

void Gelu::forward(const float* x, float* y, int batch, const ForwardPass& pass) {
  const size_t n = static_cast<size_t>(batch) * inputShape().size();
  if (pass.training) slope_.resize(n);
  kernels::geluForward(x, y, pass.training ? slope_.data() : nullptr, n);
}

void Gelu::backward(const float*, const float*, const float* dy, float* dx, int batch) {
  if (dx)
    kernels::geluBackward(slope_.data(), dy, dx, static_cast<size_t>(batch) * inputShape().size());
}

// ---- CausalSelfAttention ----

CausalSelfAttention::CausalSelfAttention(std::string name, Shape input, int heads)
    : Layer(std::move(name), input, sequence(input.height, input.channels / 3)),
      length_(input.height),
      width_(input.channels / 3),
      heads_(heads) {
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
  probs_.resize(static_cast<size_t>(batch) * heads_ * length_ * length_);
  kernels::causalAttentionForward(x, y, probs_.data(), batch, length_, width_, heads_);
}

void CausalSelfAttention::backward(const float* x, const float*, const float* dy, float* dx,
                                   int batch) {
  if (dx)
    kernels::causalAttentionBackward(x, probs_.data(), dy, dx, batch, length_, width_, heads_);
}

std::unique_ptr<Layer> makeCpuTransformerLayer(const LayerRequest& r) {
  switch (r.kind) {
    case LayerKind::kEmbedding:
      return std::make_unique<Embedding>(r.name, r.input.height, r.vocab, r.outputs);
    case LayerKind::kLayerNorm:
      return std::make_unique<LayerNorm>(r.name, r.input);
    case LayerKind::kGelu:
      return std::make_unique<Gelu>(r.name, r.input);
    case LayerKind::kCausalSelfAttention:
      return std::make_unique<CausalSelfAttention>(r.name, r.input, r.heads);
    default:
      throw std::invalid_argument("cpu device: " + layerKindName(r.kind) +
                                  " is not a transformer layer");
  }
}

}  // namespace ranklab
