#include "engine/model/cuda_transformer_layers.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/memory_kernels.h"
#include "kernels/cuda/transformer_kernels.h"

namespace ranklab {

// ---- CudaEmbedding ----

void CudaEmbedding::init(std::mt19937_64& rng) {
  useGpu(device_);
  const size_t tokens = static_cast<size_t>(vocab_) * width_;
  std::vector<float> host(tokens + static_cast<size_t>(length_) * width_);
  draw(rng, host.data(), host.data() + tokens);
  cuda::upload(token_, host.data(), tokens);
  cuda::upload(position_, host.data() + tokens, host.size() - tokens);
}

void CudaEmbedding::forward(const float* x, float* y, int batch, const ForwardPass&) {
  useGpu(device_);
  cuda::embeddingForward(x, token_, position_, y, batch, length_, width_, vocab_);
}

void CudaEmbedding::backward(const float* x, const float*, const float* dy, float*, int batch) {
  useGpu(device_);
  // Tied, the token table's gradient holds the head's share already: add to it.
  if (overwritesGradients() && !tied_)
    cuda::fill(token_grad_, static_cast<size_t>(vocab_) * width_, 0.f);
  cuda::embeddingBackward(x, dy, token_grad_, position_grad_, batch, length_, width_, vocab_,
                          !overwritesGradients());
}

// ---- CudaLayerNorm ----

void CudaLayerNorm::init(std::mt19937_64&) {
  useGpu(device_);
  cuda::fill(weight_, width_, 1.f);
  cuda::fill(bias_, width_, 0.f);
}

void CudaLayerNorm::forward(const float* x, float* y, int batch, const ForwardPass&) {
  useGpu(device_);
  rows_ = rows(batch);
  float* stats = statistics_.ensure<float>(2 * rows_);
  cuda::layerNormForward(x, weight_, bias_, y, stats, stats + rows_, rows_, width_, kEps);
}

void CudaLayerNorm::backward(const float* x, const float*, const float* dy, float* dx, int batch) {
  useGpu(device_);
  const size_t rows = this->rows(batch);
  const float* stats = static_cast<const float*>(statistics_.data());
  float* scratch = xhat_gradient_.ensure<float>(rows * width_);
  // The statistics are the forward's, of the same batch.
  cuda::layerNormBackward(x, weight_, stats, stats + rows_, dy, dx, weight_grad_, bias_grad_, rows,
                          width_, !overwritesGradients(), scratch);
}

// ---- CudaGelu ----

void CudaGelu::forward(const float* x, float* y, int batch, const ForwardPass& pass) {
  useGpu(device_);
  const size_t n = static_cast<size_t>(batch) * inputShape().size();
  if (pass.training) slopes_ = n;
  cuda::geluForward(x, y, pass.training ? device_slope_.ensure<float>(n) : nullptr, n);
}

void CudaGelu::backward(const float*, const float*, const float* dy, float* dx, int batch) {
  if (!dx) return;
  useGpu(device_);
  cuda::geluBackward(static_cast<const float*>(device_slope_.data()), dy, dx,
                     static_cast<size_t>(batch) * inputShape().size());
}

// ---- CudaCausalSelfAttention ----

void CudaCausalSelfAttention::forward(const float* x, float* y, int batch, const ForwardPass&) {
  useGpu(device_);
  probs_floats_ = static_cast<size_t>(batch) * heads_ * length_ * length_;
  cuda::causalAttentionForward(x, y, device_probs_.ensure<float>(probs_floats_), batch, length_,
                               width_, heads_);
}

void CudaCausalSelfAttention::backward(const float* x, const float*, const float* dy, float* dx,
                                       int batch) {
  if (!dx) return;
  useGpu(device_);
  float* scratch = device_dprobs_.ensure<float>(static_cast<size_t>(heads_) * length_ * length_);
  cuda::causalAttentionBackward(x, static_cast<const float*>(device_probs_.data()), dy, dx, batch,
                                length_, width_, heads_, scratch);
}

std::unique_ptr<Layer> makeCudaTransformerLayer(int device, const LayerRequest& r) {
  switch (r.kind) {
    case LayerKind::kEmbedding:
      return std::make_unique<CudaEmbedding>(device, r.name, r.input.height, r.vocab, r.outputs);
    case LayerKind::kLayerNorm:
      return std::make_unique<CudaLayerNorm>(device, r.name, r.input);
    case LayerKind::kGelu:
      return std::make_unique<CudaGelu>(device, r.name, r.input);
    case LayerKind::kCausalSelfAttention:
      return std::make_unique<CudaCausalSelfAttention>(device, r.name, r.input, r.heads);
    default:
      throw std::invalid_argument("cuda:" + std::to_string(device) + " device: " +
                                  layerKindName(r.kind) + " is not a transformer layer");
  }
}

}  // namespace ranklab
