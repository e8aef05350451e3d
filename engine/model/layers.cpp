#include "engine/model/layers.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "engine/model/transformer_layers.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/linear_forward.h"
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
  return {{"weight", weights_, static_cast<int>(biases_)}, {"bias", biases_}};
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

Linear::Linear(std::string name, Shape input, int outputs, bool adds_bias,
               const ComputeDevice& device)
    : WeightedLayer(std::move(name), input, features(outputs), input.size() * outputs, outputs,
                    intCount(input.size(), "Linear inputs"), device),
      in_(intCount(input.size(), "Linear inputs")),
      out_(outputs),
      adds_bias_(adds_bias),
      weight_in_(device),
      input_in_(device),
      grad_in_(device),
      zero_bias_(device),
      masked_grad_(device) {}

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

kernels::ConvGeometry geometryOf(Shape input, int kernel) {
  return {input.height, input.width, input.channels, kernel, kernel / 2};
}

Shape convOutput(Shape input, int out_channels, int kernel) {
  const auto g = geometryOf(input, kernel);
  if (g.outHeight() < 1 || g.outWidth() < 1) {
    throw std::invalid_argument("Conv2d: kernel " + std::to_string(kernel) +
                                " does not fit the input " + input.str());
  }
  return {g.outHeight(), g.outWidth(), out_channels};
}

}  // namespace

Conv2d::Conv2d(std::string name, Shape input, int out_channels, int kernel)
    : WeightedLayer(std::move(name), input, convOutput(input, out_channels, kernel),
                    static_cast<size_t>(out_channels) * geometryOf(input, kernel).columns(),
                    out_channels, geometryOf(input, kernel).columns(), cpuDevice()),
      out_channels_(out_channels),
      kernel_(kernel),
      padding_(kernel / 2) {}

std::string Conv2d::describe() const {
  return "Conv2d(" + std::to_string(inputShape().channels) + ", " + std::to_string(out_channels_) +
         ", kernel_size=" + std::to_string(kernel_) + ", padding=" + std::to_string(padding_) + ")";
}

bool Conv2d::usesInPlaceGemm(int rows) const {
  return precision_ == kernels::Precision::kFp32 &&
         kernels::inPlaceConvGemm(rows, out_channels_, geometryOf(inputShape(), kernel_).columns());
}

std::vector<kernels::GemmShape> Conv2d::gemms(int batch) const {
  const auto g = geometryOf(inputShape(), kernel_);
  const int k = g.columns();
  const int rows = static_cast<int>(std::min<int64_t>(
      rowsPerChunk(), static_cast<int64_t>(batch) * g.outHeight() * g.outWidth()));
  return {{"forward", Trans::kNo, Trans::kNo, rows, out_channels_, k},
          {"weight grad", Trans::kYes, Trans::kNo, k, out_channels_, rows},
          {"input grad", Trans::kNo, Trans::kNo, rows, k, out_channels_}};
}

size_t Conv2d::paddedSize(int batch) const {
  const Shape in = inputShape();
  return static_cast<size_t>(batch) * (in.height + 2 * padding_) * (in.width + 2 * padding_) *
         in.channels;
}

int Conv2d::rowsPerChunk() const {
  // Enough output pixels per GEMM to keep it efficient, few enough that im2col stays in cache.
  constexpr size_t kColumnFloats = size_t{1} << 18;
  const size_t k = geometryOf(inputShape(), kernel_).columns();
  return static_cast<int>(std::max<size_t>(64, kColumnFloats / k));
}

void Conv2d::forward(const float* x, float* y, int batch, const ForwardPass&) {
  const auto g = geometryOf(inputShape(), kernel_);
  const int k = g.columns();
  const int64_t rows = static_cast<int64_t>(batch) * g.outHeight() * g.outWidth();
  const int chunk = rowsPerChunk();
  columns_.resize(static_cast<size_t>(std::min<int64_t>(chunk, rows)) * k);
  packed_weight_.resize(weights_);
  kernels::packConvWeight(weight_, packed_weight_.data(), out_channels_, g.channels,
                          kernel_ * kernel_);
  packed_weight_t_.resize(weights_);
  kernels::transposeEach(packed_weight_.data(), packed_weight_t_.data(), 1, out_channels_, k);
  // The GEMM operands in the compute precision: the weight is cast once per step.
  weight_in_.set(precision_, packed_weight_t_.data(), weights_);
  padded_.resize(paddedSize(batch));
  kernels::padImage(x, padded_.data(), batch, g);
  const bool in_place = usesInPlaceGemm(static_cast<int>(std::min<int64_t>(chunk, rows)));
  for (int64_t first = 0; first < rows; first += chunk) {
    const int n = static_cast<int>(std::min<int64_t>(chunk, rows - first));
    // y rows (n, Cout) = columns (n, K) . W^T (K, Cout) + b
    float* out = y + first * out_channels_;
    if (in_place) {
      kernels::convForwardInPlace(padded_.data(), g, first, n, packed_weight_t_.data(),
                                  out_channels_, out);
    } else {
      kernels::im2col(padded_.data(), g, first, n, columns_.data());
      input_in_.set(precision_, columns_.data(), static_cast<size_t>(n) * k);
      kernels::gemm(Trans::kNo, Trans::kNo, n, out_channels_, k, 1.f, input_in_, k, weight_in_,
                    out_channels_, 0.f, out, out_channels_);
    }
    kernels::addBiasRows(out, bias_, n, out_channels_);
  }
}

void Conv2d::backward(const float*, const float*, const float* dy, float* dx, int batch) {
  const auto g = geometryOf(inputShape(), kernel_);
  const int k = g.columns();
  const int64_t rows = static_cast<int64_t>(batch) * g.outHeight() * g.outWidth();
  const int chunk = rowsPerChunk();
  columns_.resize(static_cast<size_t>(std::min<int64_t>(chunk, rows)) * k);
  packed_weight_grad_.resize(weights_);
  // packed_weight_ and padded_ still hold this batch's weight and input from forward().
  packed_weight_in_.set(precision_, packed_weight_.data(), weights_);
  if (dx) padded_grad_.assign(paddedSize(batch), 0.f);
  // The conv's gradients are small: zeroed here, while about to be used, when told to write.
  if (overwritesGradients()) std::fill(weight_grad_, weight_grad_ + weights_ + biases_, 0.f);
  const bool in_place = usesInPlaceGemm(static_cast<int>(std::min<int64_t>(chunk, rows)));
  for (int64_t first = 0; first < rows; first += chunk) {
    const int n = static_cast<int>(std::min<int64_t>(chunk, rows - first));
    const float* grad_out = dy + first * out_channels_;  // (n, Cout)
    grad_in_.set(precision_, grad_out, static_cast<size_t>(n) * out_channels_);
    // dW^T (K, Cout) (+)= columns^T (K, n) . dy (n, Cout), in im2col's column order
    const float beta = first == 0 ? 0.f : 1.f;
    if (in_place) {
      kernels::convWeightGradInPlace(padded_.data(), g, first, n, grad_out, out_channels_, beta,
                                     packed_weight_grad_.data());
    } else {
      kernels::im2col(padded_.data(), g, first, n, columns_.data());
      input_in_.set(precision_, columns_.data(), static_cast<size_t>(n) * k);
      kernels::gemm(Trans::kYes, Trans::kNo, k, out_channels_, n, 1.f, input_in_, k, grad_in_,
                    out_channels_, beta, packed_weight_grad_.data(), out_channels_);
    }
    kernels::sumRowsInto(bias_grad_, grad_out, n, out_channels_);
    if (!dx) continue;
    // d columns (n, K) = dy (n, Cout) . W (Cout, K), then scattered back onto the image
    kernels::gemm(Trans::kNo, Trans::kNo, n, k, out_channels_, 1.f, grad_in_, out_channels_,
                  packed_weight_in_, k, 0.f, columns_.data(), k);
    kernels::col2imAdd(columns_.data(), g, first, n, padded_grad_.data());
  }
  if (dx) kernels::cropImage(padded_grad_.data(), dx, batch, g);
  kernels::unpackConvWeightGradAdd(packed_weight_grad_.data(), weight_grad_, out_channels_,
                                   g.channels, kernel_ * kernel_);
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

std::unique_ptr<Layer> makeLayerWrittenOnce(const LayerRequest& r, const ComputeDevice& device) {
  switch (r.kind) {
    case LayerKind::kLinear:
      return std::make_unique<Linear>(r.name, r.input, r.outputs, r.adds_bias, device);
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
    case LayerKind::kConv2d:
      break;  // each device's own class yet
  }
  return nullptr;
}

std::unique_ptr<Layer> makeCpuLayer(const LayerRequest& r) {
  switch (r.kind) {
    case LayerKind::kConv2d:
      return std::make_unique<Conv2d>(r.name, r.input, r.outputs, r.kernel);
    case LayerKind::kLinear:
    case LayerKind::kMaxPool2d:
    case LayerKind::kReLU:
    case LayerKind::kDropout:
    case LayerKind::kFlatten:
    case LayerKind::kEmbedding:
    case LayerKind::kLayerNorm:
    case LayerKind::kGelu:
    case LayerKind::kCausalSelfAttention:
      return makeLayerWrittenOnce(r, cpuDevice());
  }
  throw std::invalid_argument("cpu device: no layer of " + layerKindName(r.kind));
}

}  // namespace ranklab
