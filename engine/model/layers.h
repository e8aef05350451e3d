// The layers the models are built from, each written once: it runs its passes through its
// device's (device_layer_ops.h), so one class computes on the CPU and on a GPU. Shapes per sample
// are written (H, W, C) or (features).
#pragma once

#include <memory>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/model/device_gemm_operand.h"
#include "engine/model/device_scratch.h"
#include "engine/model/layer.h"
#include "engine/model/layer_request.h"
#include "kernels/cpu/mixed_gemm.h"

namespace ranklab {

// A layer with a weight tensor and a bias vector, adjacent in the flat buffer (weight first),
// both initialised like PyTorch's default from the layer's fan-in: drawn on the host and
// uploaded to its device, so models built from one seed start equal on every device.
class WeightedLayer : public Layer {
 public:
  WeightedLayer(std::string name, Shape input, Shape output, size_t weights, size_t biases,
                int fan_in, const ComputeDevice& device);
  std::vector<ParamTensor> paramTensors() const override;
  void bind(float* params, float* grads) override;
  void init(std::mt19937_64& rng) override;
  void setPrecision(kernels::Precision precision) override { precision_ = precision; }
  // The GEMMs of one training step at this batch, each at the largest shape it runs at (a
  // convolution computes its output pixels in chunks), for the bench's kernel-choice table.
  virtual std::vector<kernels::GemmShape> gemms(int batch) const = 0;

 protected:
  const ComputeDevice& device_;
  size_t weights_, biases_;
  int fan_in_;
  kernels::Precision precision_ = kernels::Precision::kFp32;
  TensorSlice slice_;  // a Linear's tensor-parallel slice: how its tensors are cut
  float *weight_ = nullptr, *bias_ = nullptr, *weight_grad_ = nullptr, *bias_grad_ = nullptr;
};

// y (B, out) = x (B, in) . W^T + b, with W (out, in) and b (out). Absorbs a following
// ReLU: bias and ReLU in the product's epilogue, the ReLU's backward in the bias-gradient
// pass. A row-parallel slice other than the first adds no bias: y = x . W^T, while b is
// still a parameter with its gradient (the slices' partial outputs are summed with the first
// slice's bias). `input` and `outputs` are the slice's own.
class Linear : public WeightedLayer {
 public:
  Linear(std::string name, Shape input, int outputs, TensorSlice slice = {},
         const ComputeDevice& device = cpuDevice());
  std::string describe() const override;
  bool absorbFollowingRelu() override;
  std::vector<kernels::GemmShape> gemms(int batch) const override;
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;

 private:
  // db (+)= column sums of the gradient at the product's output, which it returns: dy, or dy
  // through the absorbed ReLU (whose output is y).
  const float* biasGradient(const float* y, const float* dy, int batch);
  const float* addedBias();

  int in_, out_;
  bool adds_bias_;
  bool relu_ = false;  // applies the following ReLU itself
  // The inputs in precision_: the weight and the input are cast in forward() and reused by
  // backward(), the output gradient is cast once for both of its products.
  DeviceGemmOperand weight_in_, input_in_, grad_in_;
  DeviceScratch zero_bias_;    // added instead of b when it adds none
  DeviceScratch masked_grad_;  // dy * (y > 0) when it applies the ReLU
};

// Stride-1 convolution with a square kernel and zero padding of kernel/2 (same size for odd
// kernels): W (Cout, Cin, k, k), b (Cout), computed by its device's own algorithm
// (DeviceLayerOps::makeConvKernel: conv_kernel.h).
class Conv2d : public WeightedLayer {
 public:
  Conv2d(std::string name, Shape input, int out_channels, int kernel,
         const ComputeDevice& device = cpuDevice());
  std::string describe() const override;
  std::vector<kernels::GemmShape> gemms(int batch) const override;
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;

 private:
  int out_channels_, kernel_;
  std::unique_ptr<ConvKernel> convolution_;
};

// 2x2 max pooling, stride 2 (floor mode, as PyTorch's MaxPool2d(2)).
class MaxPool2d : public Layer {
 public:
  MaxPool2d(std::string name, Shape input, const ComputeDevice& device = cpuDevice());
  std::string describe() const override { return "MaxPool2d(kernel_size=2, stride=2)"; }
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  size_t keptBytes() const override { return argmax_.usedBytes(); }

 private:
  const ComputeDevice& device_;
  DeviceScratch argmax_;  // (B, output) bytes: which of the 4 taps won
};

class ReLU : public Layer {
 public:
  ReLU(std::string name, Shape input, const ComputeDevice& device = cpuDevice())
      : Layer(std::move(name), input, input), device_(device) {}
  std::string describe() const override { return "ReLU()"; }
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;

 private:
  const ComputeDevice& device_;
};

// Offers `next` to `layer` when it is a ReLU (Layer::absorbFollowingRelu); true if absorbed.
bool absorbIfRelu(Layer& layer, const Layer& next);

// Inverted dropout: in training each value is zeroed with probability p and the rest scaled
// by 1/(1-p); in evaluation it is the identity. The mask comes from the pass's key, the same
// bits on every device.
class Dropout : public Layer {
 public:
  Dropout(std::string name, Shape input, float p, const ComputeDevice& device = cpuDevice());
  std::string describe() const override;
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  size_t keptBytes() const override { return scale_.usedBytes(); }

 private:
  const ComputeDevice& device_;
  float p_;
  bool masked_ = false;  // whether the last forward applied a mask
  DeviceScratch scale_;  // (B, input): 0 or 1/(1-p)
};

// (H, W, C) channels-last -> (C*H*W) in PyTorch's (C, H, W) order, so a following Linear's
// weight is laid out exactly as PyTorch's nn.Flatten + nn.Linear expect.
class Flatten : public Layer {
 public:
  Flatten(std::string name, Shape input, const ComputeDevice& device = cpuDevice());
  std::string describe() const override { return "Flatten()"; }
  void forward(const float* x, float* y, int batch, const ForwardPass& pass) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;

 private:
  const ComputeDevice& device_;
};

// A count as the int that Shape and the GEMMs' dimensions hold; throws std::length_error
// naming `what` for a larger one.
int intCount(size_t count, const char* what);

// The layer a request asks for, on `device`: every device's table (DeviceLayers::makeLayer).
// Throws std::invalid_argument naming a kind outside the list.
std::unique_ptr<Layer> makeLayerOn(const LayerRequest& request, const ComputeDevice& device);

}  // namespace ranklab
