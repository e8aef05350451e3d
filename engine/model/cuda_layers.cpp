// The CUDA layers (cuda_layers.h) over kernels/cuda. Shapes are per batch, row-major,
// channels-last: (B, features) for flat layers, (B, H, W, C) for images.
#include "engine/model/cuda_layers.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/layer_kernels.h"
#include "kernels/cuda/memory_kernels.h"

namespace ranklab {

using cuda::check;

using kernels::Trans;

void useGpu(int device) {
  check(cudaSetDevice(device), "set device (layer)");
}

namespace {

cuda::ConvShape convShapeOf(Shape input, int kernel) {
  cuda::ConvShape s;
  s.height = input.height;
  s.width = input.width;
  s.channels = input.channels;
  s.kernel = kernel;
  s.padding = kernel / 2;
  return s;
}

Shape convOutput(Shape input, int out_channels, int kernel) {
  const cuda::ConvShape s = convShapeOf(input, kernel);
  if (kernel < 1 || s.outHeight() < 1 || s.outWidth() < 1) {
    throw std::invalid_argument("Conv2d: kernel " + std::to_string(kernel) +
                                " does not fit the input " + input.str());
  }
  return {s.outHeight(), s.outWidth(), out_channels};
}

}  // namespace

// ---- CudaScratch, CudaGemmOperand ----

CudaScratch::~CudaScratch() {
  // No throw from a destructor; at process exit the runtime may already be gone.
  if (data_ != nullptr) cudaFree(data_);
}

void* CudaScratch::bytes(size_t wanted) {
  if (wanted <= capacity_) return data_;
  if (data_ != nullptr) {
    // The layer's queued kernels (this thread's stream) may still read it.
    check(cudaStreamSynchronize(cudaStreamPerThread), "wait before growing scratch");
    check(cudaFree(data_), "free scratch");
    data_ = nullptr;
    capacity_ = 0;
  }
  check(cudaMalloc(&data_, wanted), "malloc scratch");
  capacity_ = wanted;
  return data_;
}

void CudaGemmOperand::set(kernels::Precision precision, const float* data, size_t count) {
  precision_ = precision;
  source_ = data;
  count_ = count;
  low_ = nullptr;
  if (precision == kernels::Precision::kFp32) return;
  uint16_t* cast = cast_.ensure<uint16_t>(count);
  cuda::castFromFp32(precision, data, cast, count);
  low_ = cast;
}

// ---- CudaWeightedLayer ----

CudaWeightedLayer::CudaWeightedLayer(int device, bool tf32, std::string name, Shape input,
                                     Shape output, size_t weights, size_t biases, int fan_in)
    : Layer(std::move(name), input, output),
      device_(device),
      tf32_(tf32),
      weights_(weights),
      biases_(biases),
      fan_in_(fan_in) {}

// C = op(A) . op(B) + beta * C with both operands in their (shared) compute precision; fp32
// products on TF32 tensor cores where the device allows it.
void CudaWeightedLayer::gemm(Trans trans_a, Trans trans_b, int m, int n, int k,
                             const CudaGemmOperand& a, int lda, const CudaGemmOperand& b, int ldb,
                             float beta, float* c, int ldc) const {
  if (a.precision() != b.precision()) {
    throw std::logic_error("cuda gemm: operands in different precisions");
  }
  if (a.precision() == kernels::Precision::kFp32) {
    cuda::sgemm(trans_a, trans_b, m, n, k, 1.f, a.f32(), lda, b.f32(), ldb, beta, c, ldc, tf32_);
  } else {
    cuda::gemmLowPrecision(a.precision(), trans_a, trans_b, m, n, k, 1.f, a.low(), lda, b.low(),
                           ldb, beta, c, ldc);
  }
}

std::vector<ParamTensor> CudaWeightedLayer::paramTensors() const {
  return {{"weight", weights_, static_cast<int>(biases_)}, {"bias", biases_}};
}

void CudaWeightedLayer::bind(float* params, float* grads) {
  weight_ = params;
  bias_ = params ? params + weights_ : nullptr;
  weight_grad_ = grads;
  bias_grad_ = grads ? grads + weights_ : nullptr;
}

void CudaWeightedLayer::init(std::mt19937_64& rng) {
  // The CPU WeightedLayer's draws, in its order (weight, then bias), made on the host.
  const float bound = 1.f / std::sqrt(static_cast<float>(fan_in_));
  std::uniform_real_distribution<float> dist(-bound, bound);
  std::vector<float> values(weights_ + biases_);
  for (float& value : values) value = dist(rng);
  useDevice();
  cuda::upload(weight_, values.data(), weights_);
  cuda::upload(bias_, values.data() + weights_, biases_);
}

void CudaWeightedLayer::useDevice() const {
  useGpu(device_);
}

// ---- CudaConv2d ----

CudaConv2d::CudaConv2d(int device, bool tf32, std::string name, Shape input, int out_channels,
                       int kernel)
    : CudaWeightedLayer(device, tf32, std::move(name), input,
                        convOutput(input, out_channels, kernel),
                        static_cast<size_t>(out_channels) * convShapeOf(input, kernel).columns(),
                        out_channels, convShapeOf(input, kernel).columns()),
      out_channels_(out_channels),
      kernel_(kernel),
      padding_(kernel / 2) {}

std::string CudaConv2d::describe() const {
  return "Conv2d(" + std::to_string(inputShape().channels) + ", " + std::to_string(out_channels_) +
         ", kernel_size=" + std::to_string(kernel_) + ", padding=" + std::to_string(padding_) + ")";
}

int CudaConv2d::imagesPerChunk(int batch) const {
  // Whole images per chunk, the column matrix at most 64 MiB (one image always fits).
  constexpr size_t kColumnFloats = size_t{1} << 24;
  const cuda::ConvShape s = convShapeOf(inputShape(), kernel_);
  const size_t per_image = static_cast<size_t>(s.outHeight()) * s.outWidth() * s.columns();
  const size_t images = std::max<size_t>(1, kColumnFloats / std::max<size_t>(1, per_image));
  return static_cast<int>(std::min<size_t>(images, std::max(batch, 1)));
}

void CudaConv2d::fillColumns(const float* x, int first, int images) {
  if (columns_of_ == x && columns_first_ == first && columns_count_ == images &&
      input_in_.precision() == precision_) {
    return;  // backward right after forward's last chunk: the columns are still there
  }
  const cuda::ConvShape s = convShapeOf(inputShape(), kernel_);
  const size_t rows = static_cast<size_t>(images) * s.outHeight() * s.outWidth();
  float* columns = columns_.ensure<float>(rows * s.columns());
  cuda::im2col(x + static_cast<size_t>(first) * inputShape().size(), s, images, columns);
  input_in_.set(precision_, columns, rows * s.columns());
  columns_of_ = x;
  columns_first_ = first;
  columns_count_ = images;
}

void CudaConv2d::forward(const float* x, float* y, int batch, const ForwardPass&) {
  useDevice();
  const cuda::ConvShape s = convShapeOf(inputShape(), kernel_);
  const int k = s.columns();
  const size_t pixels = static_cast<size_t>(s.outHeight()) * s.outWidth();
  const int chunk = imagesPerChunk(batch);
  weight_in_.set(precision_, weight_, weights_);  // (Cout, K)
  columns_of_ = nullptr;  // x may hold new values at the same address: always recompute
  for (int first = 0; first < batch; first += chunk) {
    const int images = std::min(chunk, batch - first);
    fillColumns(x, first, images);
    const int rows = intCount(images * pixels, "Conv2d output pixels in a chunk");
    // y rows (n, Cout) = columns (n, K) . W^T (K, Cout)
    gemm(Trans::kNo, Trans::kYes, rows, out_channels_, k, input_in_, k, weight_in_, k, 0.f,
         y + first * pixels * out_channels_, out_channels_);
  }
  cuda::addBiasAndRelu(y, bias_, batch * pixels, out_channels_, false);
}

void CudaConv2d::backward(const float* x, const float*, const float* dy, float* dx, int batch) {
  useDevice();
  const cuda::ConvShape s = convShapeOf(inputShape(), kernel_);
  const int k = s.columns();
  const size_t pixels = static_cast<size_t>(s.outHeight()) * s.outWidth();
  const int chunk = imagesPerChunk(batch);
  const bool accumulate = !overwritesGradients();
  if (!weight_in_.holds(weight_, weights_)) weight_in_.set(precision_, weight_, weights_);
  // db (Cout) (+)= column sums of dy (B*outH*outW, Cout)
  cuda::sumRows(bias_grad_, dy, batch * pixels, out_channels_, accumulate);
  // The last chunk first: its columns are still those forward() made.
  const int last_first = batch == 0 ? 0 : (batch - 1) / chunk * chunk;
  bool written = false;
  for (int first = last_first; first >= 0 && first < batch; first -= chunk) {
    const int images = std::min(chunk, batch - first);
    fillColumns(x, first, images);
    const int rows = intCount(images * pixels, "Conv2d output pixels in a chunk");
    const float* grad_out = dy + first * pixels * out_channels_;  // (n, Cout)
    grad_in_.set(precision_, grad_out, static_cast<size_t>(rows) * out_channels_);
    // dW (Cout, K) (+)= dy^T (Cout, n) . columns (n, K): PyTorch's layout as it is
    const float beta = accumulate || written ? 1.f : 0.f;
    gemm(Trans::kYes, Trans::kNo, out_channels_, k, rows, grad_in_, out_channels_, input_in_, k,
         beta, weight_grad_, k);
    written = true;
    if (!dx) continue;
    // d columns (n, K) = dy (n, Cout) . W (Cout, K), gathered back onto these images
    float* column_grads = column_grads_.ensure<float>(static_cast<size_t>(rows) * k);
    gemm(Trans::kNo, Trans::kNo, rows, k, out_channels_, grad_in_, out_channels_, weight_in_, k,
         0.f, column_grads, k);
    cuda::col2im(column_grads, s, images, dx + static_cast<size_t>(first) * inputShape().size());
  }
  if (!written && !accumulate) cuda::fill(weight_grad_, weights_, 0.f);  // an empty batch
}

std::unique_ptr<Layer> makeCudaLayer(int device, bool tf32, const LayerRequest& r) {
  switch (r.kind) {
    case LayerKind::kConv2d:
      return std::make_unique<CudaConv2d>(device, tf32, r.name, r.input, r.outputs, r.kernel);
    case LayerKind::kLinear:
    case LayerKind::kMaxPool2d:
    case LayerKind::kReLU:
    case LayerKind::kDropout:
    case LayerKind::kFlatten:
    case LayerKind::kEmbedding:
    case LayerKind::kLayerNorm:
    case LayerKind::kGelu:
    case LayerKind::kCausalSelfAttention:
      break;  // written once (makeLayerWrittenOnce), built before this table is asked
  }
  throw std::invalid_argument("cuda:" + std::to_string(device) + " device: no layer of " +
                              layerKindName(r.kind));
}

}  // namespace ranklab
