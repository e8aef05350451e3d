// The CUDA device's own layers (those not yet written once over its passes, layers.h): the
// semantics and parameter layout of engine/model/layers.h and transformer_layers.h, computed
// on a GPU over kernels/cuda. Conventions:
// - every pointer given to bind(), forward() and backward() is a device pointer on the
//   layer's GPU, and so is every buffer a layer keeps (its scratch);
// - each entry point makes the layer's GPU current first (cudaSetDevice), so any thread may
//   call it; work is queued on that thread's own default stream (per-thread: not ordered
//   with another thread's, so a hand-over between threads synchronizes first);
// - init() draws on the host exactly what the CPU layer draws, then uploads it, so a CPU and
//   a CUDA model built from one seed start equal;
// - the AMP precisions cast each GEMM operand on the device and accumulate in fp32.
// Failures throw std::runtime_error naming the CUDA or cuBLAS operation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/model/layer.h"
#include "engine/model/layer_request.h"
#include "engine/model/layers.h"
#include "kernels/cpu/mixed_gemm.h"

namespace ranklab {

// Makes `device` current on the calling thread: every layer's entry point first (the thread
// may have another GPU current, or none).
void useGpu(int device);

// GPU memory that grows on demand and is kept for the next pass (a CUDA layer's scratch;
// the layers written once use device_scratch.h).
class CudaScratch {
 public:
  CudaScratch() = default;
  ~CudaScratch();
  CudaScratch(const CudaScratch&) = delete;
  CudaScratch& operator=(const CudaScratch&) = delete;

  // At least `wanted` bytes on the current device; the old contents are lost when it grows.
  void* bytes(size_t wanted);
  template <class T>
  T* ensure(size_t count) {
    return static_cast<T*>(bytes(count * sizeof(T)));
  }
  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

// A GEMM input in the compute precision: the fp32 pointer itself, or a cast copy on the
// device (kernels::GemmOperand's twin), so a weight or input is cast once per step.
class CudaGemmOperand {
 public:
  void set(kernels::Precision precision, const float* data, size_t count);
  bool holds(const float* data, size_t count) const { return source_ == data && count_ == count; }

  kernels::Precision precision() const { return precision_; }
  const float* f32() const { return source_; }
  const uint16_t* low() const { return low_; }

 private:
  kernels::Precision precision_ = kernels::Precision::kFp32;
  const float* source_ = nullptr;
  size_t count_ = 0;
  CudaScratch cast_;
  const uint16_t* low_ = nullptr;
};

// A weight and a bias adjacent in the flat buffer (weight first), initialised like the CPU's
// WeightedLayer.
class CudaWeightedLayer : public Layer {
 public:
  // tf32: fp32 products on TF32 tensor cores (train.tf32).
  CudaWeightedLayer(int device, bool tf32, std::string name, Shape input, Shape output,
                    size_t weights, size_t biases, int fan_in);
  std::vector<ParamTensor> paramTensors() const override;
  void bind(float* params, float* grads) override;
  void init(std::mt19937_64& rng) override;
  void setPrecision(kernels::Precision precision) override { precision_ = precision; }

 protected:
  void useDevice() const;  // makes this layer's GPU current on the calling thread
  void gemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k,
            const CudaGemmOperand& a, int lda, const CudaGemmOperand& b, int ldb, float beta,
            float* c, int ldc) const;

  int device_;
  bool tf32_;
  size_t weights_, biases_;
  int fan_in_;
  kernels::Precision precision_ = kernels::Precision::kFp32;
  CudaGemmOperand weight_in_, input_in_, grad_in_;
  float *weight_ = nullptr, *bias_ = nullptr, *weight_grad_ = nullptr, *bias_grad_ = nullptr;
};

// Stride-1 convolution, square kernel, zero padding kernel/2: W (Cout, Cin, k, k),
// b (Cout), as the CPU Conv2d. im2col (columns in W's (Cin, k, k) order) + GEMM, over
// chunks of whole images so the column matrix stays bounded.
class CudaConv2d : public CudaWeightedLayer {
 public:
  CudaConv2d(int device, bool tf32, std::string name, Shape input, int out_channels, int kernel);
  std::string describe() const override;
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;

 private:
  int imagesPerChunk(int batch) const;
  // The column matrix of images [first, first + images) of x in columns_ (and cast into
  // input_in_); reused when it already holds exactly those.
  void fillColumns(const float* x, int first, int images);

  int out_channels_, kernel_, padding_;
  CudaScratch columns_;       // (rows of one chunk, Cin*k*k)
  CudaScratch column_grads_;  // the same shape, for dx
  // What columns_ holds: im2col of images [first, first + count) of x.
  const float* columns_of_ = nullptr;
  int columns_first_ = -1, columns_count_ = 0;
};

// The CUDA device's table of layers, on GPU `device` (the caller has made it current),
// fp32 products on TF32 tensor cores where `tf32`. Throws std::invalid_argument naming a
// kind outside the list.
std::unique_ptr<Layer> makeCudaLayer(int device, bool tf32, const LayerRequest& request);

}  // namespace ranklab
