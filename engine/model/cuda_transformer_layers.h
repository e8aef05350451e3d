// The transformer's layers on a GPU: the CPU's (engine/model/transformer_layers.h), with
// their names, shapes, parameter layout and initial draw, computing over
// kernels/cuda/transformer_kernels.h in the layer's GPU memory (cuda_layers.h's conventions:
// device pointers, the layer's GPU made current by each entry point). What a layer keeps for
// its backward lives in device scratch.
#pragma once

#include <memory>

#include "engine/model/cuda_layers.h"
#include "engine/model/layer_request.h"
#include "engine/model/transformer_layers.h"

namespace ranklab {

class CudaEmbedding : public Embedding {
 public:
  CudaEmbedding(int device, std::string name, int length, int vocab, int width)
      : Embedding(std::move(name), length, vocab, width), device_(device) {}
  void init(std::mt19937_64& rng) override;  // the CPU's draw, uploaded
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;

 private:
  int device_;
};

class CudaLayerNorm : public LayerNorm {
 public:
  CudaLayerNorm(int device, std::string name, Shape input)
      : LayerNorm(std::move(name), input), device_(device) {}
  void init(std::mt19937_64& rng) override;  // ones and zeros
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  size_t keptBytes() const override { return 2 * rows_ * sizeof(float); }

 private:
  int device_;
  size_t rows_ = 0;            // of the last forward
  CudaScratch statistics_;     // mean then rstd, per row
  CudaScratch xhat_gradient_;  // backward's dy * xhat, summed by columns
};

class CudaGelu : public Gelu {
 public:
  CudaGelu(int device, std::string name, Shape input)
      : Gelu(std::move(name), input), device_(device) {}
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  size_t keptBytes() const override { return slopes_ * sizeof(float); }

 private:
  int device_;
  size_t slopes_ = 0;  // of the last training forward
  CudaScratch device_slope_;
};

class CudaCausalSelfAttention : public CausalSelfAttention {
 public:
  CudaCausalSelfAttention(int device, std::string name, Shape input, int heads)
      : CausalSelfAttention(std::move(name), input, heads), device_(device) {}
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  size_t keptBytes() const override { return probs_floats_ * sizeof(float); }
  size_t workspaceBytes() const override { return device_dprobs_.capacity(); }

 private:
  int device_;
  size_t probs_floats_ = 0;  // of the last forward
  CudaScratch device_probs_, device_dprobs_;
};

}  // namespace ranklab
