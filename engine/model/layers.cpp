#include "engine/model/layers.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "engine/model/transformer_layers.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/mixed_gemm.h"

namespace ranklab {

using kernels::Trans;

std::string Shape::str() const {
  if (height == 1 && width == 1) return std::to_string(channels);
  return std::to_string(height) + "x" + std::to_string(width) + "x" + std::to_string(channels);
}

namespace {

Shape features(int n) {
  return {1, 1, n};
}

}  // namespace

int intCount(size_t count, const char* what) {
  constexpr auto kMost = static_cast<size_t>(std::numeric_limits<int>::max());
  if (count > kMost) {
    throw std::length_error(std::string(what) + ": " + std::to_string(count) +
                            " is more than the " + std::to_string(kMost) + " an int holds");
  }
  return static_cast<int>(count);
}

// ---- WeightedLayer ----

WeightedLayer::WeightedLayer(std::string name, Shape input, Shape output, size_t weights,
                             size_t biases, int fan_in, const ComputeDevice& device)
    : Layer(std::move(name), input, output),
      device_(device),
      weights_(weights),
      biases_(biases),
      fan_in_(fan_in) {}

std::vector<ParamTensor> WeightedLayer::paramTensors() const {
  return {{"weight", weights_, static_cast<int>(biases_), weightPartOf(slice_)},
          {"bias", biases_, 0, biasPartOf(slice_)}};
}

void WeightedLayer::bind(float* params, float* grads) {
  weight_ = params;
  bias_ = params ? params + weights_ : nullptr;
  weight_grad_ = grads;
  bias_grad_ = grads ? grads + weights_ : nullptr;
}

void WeightedLayer::init(std::mt19937_64& rng) {
  // PyTorch's default for Linear and Conv2d (kaiming_uniform with a=sqrt(5)), weight first.
  const float bound = 1.f / std::sqrt(static_cast<float>(fan_in_));
  std::uniform_real_distribution<float> dist(-bound, bound);
  std::vector<float> values(weights_ + biases_);
  for (float& value : values) value = dist(rng);
  device_.upload(weight_, values.data(), weights_);
  device_.upload(bias_, values.data() + weights_, biases_);
}

// ---- Linear ----

Linear::Linear(std::string name, Shape input, int outputs, TensorSlice slice,
               const ComputeDevice& device)
    : WeightedLayer(std::move(name), input, features(outputs), input.size() * outputs, outputs,
                    intCount(input.size(), "Linear inputs"), device),
      in_(intCount(input.size(), "Linear inputs")),
      out_(outputs),
      adds_bias_(slice.split != SliceSplit::kInputs || slice.index == 0),
      weight_in_(device),
      input_in_(device),
      grad_in_(device),
      zero_bias_(device),
      masked_grad_(device) {
  slice_ = slice;
}

std::string Linear::describe() const {
  return "Linear(" + std::to_string(in_) + ", " + std::to_string(out_) + ")";
}

bool Linear::absorbFollowingRelu() {
  relu_ = true;
  return true;
}

std::vector<kernels::GemmShape> Linear::gemms(int batch) const {
  return {{"forward", Trans::kNo, Trans::kYes, batch, out_, in_},
          {"weight grad", Trans::kYes, Trans::kNo, out_, in_, batch},
          {"input grad", Trans::kNo, Trans::kNo, batch, in_, out_}};
}

const float* Linear::addedBias() {
  if (adds_bias_) return bias_;
  if (zero_bias_.usedBytes() == 0) {
    float* zeros = zero_bias_.ensure<float>(out_);
    device_.fill(zeros, out_, 0.f);
  }
  return zero_bias_.data<float>();
}

void Linear::forward(const float* x, float* y, int batch, const ForwardPass&) {
  weight_in_.set(precision_, weight_, weights_);
  input_in_.set(precision_, x, static_cast<size_t>(batch) * in_);
  device_.linearForward(input_in_.input(), weight_in_.input(), addedBias(), y, batch, in_, out_,
                        relu_);
}

const float* Linear::biasGradient(const float* y, const float* dy, int batch) {
  const bool accumulate = !overwritesGradients();
  if (!relu_) {
    device_.sumRows(bias_grad_, dy, batch, out_, accumulate);
    return dy;
  }
  float* dz = masked_grad_.ensure<float>(static_cast<size_t>(batch) * out_);
  device_.reluMaskSumRows(dy, y, dz, bias_grad_, batch, out_, accumulate);
  return dz;
}

void Linear::backward(const float* x, const float* y, const float* dy, float* dx, int batch) {
  const size_t inputs = static_cast<size_t>(batch) * in_;
  // The weight and input cast by forward() are this batch's unless the caller changed them.
  if (!input_in_.holds(x, inputs)) input_in_.set(precision_, x, inputs);
  if (!weight_in_.holds(weight_, weights_)) weight_in_.set(precision_, weight_, weights_);
  // db (out) (+)= column sums of dz, dz = dy (through the ReLU if absorbed)
  const float* dz = biasGradient(y, dy, batch);
  grad_in_.set(precision_, dz, static_cast<size_t>(batch) * out_);
  // dW (out, in) (+)= dz^T (out, B) . x (B, in)
  device_.mixedGemm(Trans::kYes, Trans::kNo, out_, in_, batch, grad_in_.input(), out_,
                    input_in_.input(), in_, overwritesGradients() ? 0.f : 1.f, weight_grad_, in_);
  // dx (B, in) = dz (B, out) . W (out, in)
  if (dx) {
    device_.mixedGemm(Trans::kNo, Trans::kNo, batch, in_, out_, grad_in_.input(), out_,
                      weight_in_.input(), in_, 0.f, dx, in_);
  }
}

// ---- Conv2d ----

namespace {

Shape convOutput(Shape input, int out_channels, int kernel) {
  const int height = input.height + 2 * (kernel / 2) - kernel + 1;
  const int width = input.width + 2 * (kernel / 2) - kernel + 1;
  if (kernel < 1 || height < 1 || width < 1) {
    throw std::invalid_argument("Conv2d: kernel " + std::to_string(kernel) +
                                " does not fit the input " + input.str());
  }
  return {height, width, out_channels};
}

}  // namespace

Conv2d::Conv2d(std::string name, Shape input, int out_channels, int kernel,
               const ComputeDevice& device)
    : WeightedLayer(std::move(name), input, convOutput(input, out_channels, kernel),
                    static_cast<size_t>(out_channels) * input.channels * kernel * kernel,
                    out_channels, input.channels * kernel * kernel, device),
      out_channels_(out_channels),
      kernel_(kernel),
      convolution_(device.makeConvKernel({input, out_channels, kernel})) {}

std::string Conv2d::describe() const {
  return "Conv2d(" + std::to_string(inputShape().channels) + ", " + std::to_string(out_channels_) +
         ", kernel_size=" + std::to_string(kernel_) + ", padding=" + std::to_string(kernel_ / 2) +
         ")";
}

std::vector<kernels::GemmShape> Conv2d::gemms(int batch) const {
  return convolution_->gemms(batch);
}

void Conv2d::forward(const float* x, float* y, int batch, const ForwardPass&) {
  convolution_->forward(x, weight_, bias_, y, batch, precision_);
}

void Conv2d::backward(const float* x, const float*, const float* dy, float* dx, int batch) {
  convolution_->backward(x, weight_, dy, dx, weight_grad_, bias_grad_, batch, precision_,
                         !overwritesGradients());
}

// ---- MaxPool2d ----

MaxPool2d::MaxPool2d(std::string name, Shape input, const ComputeDevice& device)
    : Layer(std::move(name), input, {input.height / 2, input.width / 2, input.channels}),
      device_(device),
      argmax_(device) {
  if (input.height < 2 || input.width < 2) {
    throw std::invalid_argument("MaxPool2d: input " + input.str() + " is smaller than 2x2");
  }
}

void MaxPool2d::forward(const float* x, float* y, int batch, const ForwardPass&) {
  uint8_t* argmax = argmax_.ensure<uint8_t>(static_cast<size_t>(batch) * outputShape().size());
  const Shape in = inputShape();
  device_.maxPool2x2Forward(x, y, argmax, batch, in.height, in.width, in.channels);
}

void MaxPool2d::backward(const float*, const float*, const float* dy, float* dx, int batch) {
  if (!dx) return;
  const Shape in = inputShape();
  device_.maxPool2x2Backward(dy, argmax_.data<uint8_t>(), dx, batch, in.height, in.width,
                             in.channels);
}

// ---- ReLU ----

void ReLU::forward(const float* x, float* y, int batch, const ForwardPass&) {
  device_.relu(x, y, batch * inputShape().size());
}

void ReLU::backward(const float*, const float* y, const float* dy, float* dx, int batch) {
  if (dx) device_.reluGradient(dy, y, dx, batch * inputShape().size());
}

bool absorbIfRelu(Layer& layer, const Layer& next) {
  return dynamic_cast<const ReLU*>(&next) && layer.absorbFollowingRelu();
}

// ---- Dropout ----

Dropout::Dropout(std::string name, Shape input, float p, const ComputeDevice& device)
    : Layer(std::move(name), input, input), device_(device), p_(p), scale_(device) {
  if (!(p >= 0.f && p < 1.f)) {
    throw std::invalid_argument("Dropout: p must be >= 0 and < 1, got " + std::to_string(p));
  }
}

std::string Dropout::describe() const {
  char text[48];
  std::snprintf(text, sizeof text, "Dropout(p=%g)", p_);
  return text;
}

void Dropout::forward(const float* x, float* y, int batch, const ForwardPass& pass) {
  const size_t n = batch * inputShape().size();
  masked_ = pass.training && p_ > 0.f;
  if (!masked_) return device_.copy(y, x, n);  // nothing when y is x
  float* scale = scale_.ensure<float>(n);
  device_.dropoutMask(pass.dropout_key, p_, scale, n);
  device_.multiply(x, scale, y, n);
}

void Dropout::backward(const float*, const float*, const float* dy, float* dx, int batch) {
  if (!dx) return;
  const size_t n = batch * inputShape().size();
  if (masked_) return device_.multiply(dy, scale_.data<float>(), dx, n);
  device_.copy(dx, dy, n);
}

// ---- Flatten ----

Flatten::Flatten(std::string name, Shape input, const ComputeDevice& device)
    : Layer(std::move(name), input, features(intCount(input.size(), "Flatten features"))),
      device_(device) {}

void Flatten::forward(const float* x, float* y, int batch, const ForwardPass&) {
  const Shape in = inputShape();
  // (B, H*W, C) -> (B, C, H*W)
  device_.transposeEach(x, y, batch, static_cast<size_t>(in.height) * in.width, in.channels);
}

void Flatten::backward(const float*, const float*, const float* dy, float* dx, int batch) {
  const Shape in = inputShape();
  // (B, C, H*W) -> (B, H*W, C)
  if (dx)
    device_.transposeEach(dy, dx, batch, in.channels, static_cast<size_t>(in.height) * in.width);
}

namespace {

std::unique_ptr<Layer> makeLayerOfKind(const LayerRequest& r, const ComputeDevice& device) {
  switch (r.kind) {
    case LayerKind::kLinear:
      return std::make_unique<Linear>(r.name, r.input, r.outputs, r.slice, device);
    case LayerKind::kConv2d:
      return std::make_unique<Conv2d>(r.name, r.input, r.outputs, r.kernel, device);
    case LayerKind::kMaxPool2d:
      return std::make_unique<MaxPool2d>(r.name, r.input, device);
    case LayerKind::kReLU:
      return std::make_unique<ReLU>(r.name, r.input, device);
    case LayerKind::kDropout:
      return std::make_unique<Dropout>(r.name, r.input, r.dropout, device);
    case LayerKind::kFlatten:
      return std::make_unique<Flatten>(r.name, r.input, device);
    case LayerKind::kEmbedding:
    case LayerKind::kLayerNorm:
    case LayerKind::kGelu:
    case LayerKind::kCausalSelfAttention:
      return makeTransformerLayer(r, device);
  }
  throw std::invalid_argument(device.name() + " device: no layer of " + layerKindName(r.kind));
}

}  // namespace

std::unique_ptr<Layer> makeLayerOn(const LayerRequest& r, const ComputeDevice& device) {
  std::unique_ptr<Layer> layer = makeLayerOfKind(r, device);
  layer->setRequest(r);
  return layer;
}

}  // namespace ranklab
