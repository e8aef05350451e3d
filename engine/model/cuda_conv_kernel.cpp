#include "engine/model/cuda_conv_kernel.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "engine/model/device_gemm_operand.h"
#include "engine/model/device_scratch.h"
#include "engine/model/layers.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/layer_kernels.h"

namespace ranklab {
namespace {

using kernels::Trans;

class CudaConvKernel : public ConvKernel {
 public:
  CudaConvKernel(const ConvSpec& spec, const ComputeDevice& device, int index)
      : device_(device),
        index_(index),
        input_(spec.input),
        out_channels_(spec.out_channels),
        s_{spec.input.height, spec.input.width, spec.input.channels, spec.kernel, spec.kernel / 2},
        weights_(static_cast<size_t>(spec.out_channels) * s_.columns()),
        columns_(device),
        column_grads_(device),
        weight_in_(device),
        input_in_(device),
        grad_in_(device) {}

  void forward(const float* x, const float* w, const float* b, float* y, int batch,
               kernels::Precision precision) override;
  void backward(const float* x, const float* w, const float* dy, float* dx, float* dw, float* db,
                int batch, kernels::Precision precision, bool accumulate) override;
  std::vector<kernels::GemmShape> gemms(int batch) const override;

 private:
  size_t pixels() const { return static_cast<size_t>(s_.outHeight()) * s_.outWidth(); }
  int imagesPerChunk(int batch) const;
  // The column matrix of images [first, first + images) of x in columns_ (and cast into
  // input_in_); reused when it already holds exactly those.
  void fillColumns(const float* x, int first, int images, kernels::Precision precision);

  const ComputeDevice& device_;
  int index_;
  Shape input_;
  int out_channels_;
  cuda::ConvShape s_;
  size_t weights_;
  DeviceScratch columns_;       // (rows of one chunk, Cin*k*k)
  DeviceScratch column_grads_;  // the same shape, for dx
  DeviceGemmOperand weight_in_, input_in_, grad_in_;
  // What columns_ holds: im2col of images [first, first + count) of x.
  const float* columns_of_ = nullptr;
  int columns_first_ = -1, columns_count_ = 0;
};

int CudaConvKernel::imagesPerChunk(int batch) const {
  // Whole images per chunk, the column matrix at most 64 MiB (one image always fits).
  constexpr size_t kColumnFloats = size_t{1} << 24;
  const size_t per_image = pixels() * s_.columns();
  const size_t images = std::max<size_t>(1, kColumnFloats / std::max<size_t>(1, per_image));
  return static_cast<int>(std::min<size_t>(images, std::max(batch, 1)));
}

std::vector<kernels::GemmShape> CudaConvKernel::gemms(int batch) const {
  const int k = s_.columns();
  const int n = static_cast<int>(imagesPerChunk(batch) * pixels());
  return {{"forward", Trans::kNo, Trans::kYes, n, out_channels_, k},
          {"weight grad", Trans::kYes, Trans::kNo, out_channels_, k, n},
          {"input grad", Trans::kNo, Trans::kNo, n, k, out_channels_}};
}

void CudaConvKernel::fillColumns(const float* x, int first, int images,
                                 kernels::Precision precision) {
  if (columns_of_ == x && columns_first_ == first && columns_count_ == images &&
      input_in_.input().precision == precision) {
    return;  // backward right after forward's last chunk: the columns are still there
  }
  const size_t rows = static_cast<size_t>(images) * pixels();
  float* columns = columns_.ensure<float>(rows * s_.columns());
  cuda::check(cudaSetDevice(index_), "set device (conv)");
  cuda::im2col(x + static_cast<size_t>(first) * input_.size(), s_, images, columns);
  input_in_.set(precision, columns, rows * s_.columns());
  columns_of_ = x;
  columns_first_ = first;
  columns_count_ = images;
}

void CudaConvKernel::forward(const float* x, const float* w, const float* b, float* y, int batch,
                             kernels::Precision precision) {
  const int k = s_.columns();
  const int chunk = imagesPerChunk(batch);
  weight_in_.set(precision, w, weights_);  // (Cout, K)
  columns_of_ = nullptr;  // x may hold new values at the same address: always recompute
  for (int first = 0; first < batch; first += chunk) {
    const int images = std::min(chunk, batch - first);
    fillColumns(x, first, images, precision);
    const int rows = intCount(images * pixels(), "Conv2d output pixels in a chunk");
    // y rows (n, Cout) = columns (n, K) . W^T (K, Cout)
    device_.mixedGemm(Trans::kNo, Trans::kYes, rows, out_channels_, k, input_in_.input(), k,
                      weight_in_.input(), k, 0.f, y + first * pixels() * out_channels_,
                      out_channels_);
  }
  cuda::check(cudaSetDevice(index_), "set device (conv)");
  cuda::addBiasAndRelu(y, b, batch * pixels(), out_channels_, false);
}

void CudaConvKernel::backward(const float* x, const float* w, const float* dy, float* dx, float* dw,
                              float* db, int batch, kernels::Precision precision, bool accumulate) {
  const int k = s_.columns();
  const int chunk = imagesPerChunk(batch);
  if (!weight_in_.holds(w, weights_)) weight_in_.set(precision, w, weights_);
  // db (Cout) (+)= column sums of dy (B*outH*outW, Cout)
  device_.sumRows(db, dy, static_cast<int>(batch * pixels()), out_channels_, accumulate);
  // The last chunk first: its columns are still those forward() made.
  const int last_first = batch == 0 ? 0 : (batch - 1) / chunk * chunk;
  bool written = false;
  for (int first = last_first; first >= 0 && first < batch; first -= chunk) {
    const int images = std::min(chunk, batch - first);
    fillColumns(x, first, images, precision);
    const int rows = intCount(images * pixels(), "Conv2d output pixels in a chunk");
    const float* grad_out = dy + first * pixels() * out_channels_;  // (n, Cout)
    grad_in_.set(precision, grad_out, static_cast<size_t>(rows) * out_channels_);
    // dW (Cout, K) (+)= dy^T (Cout, n) . columns (n, K): PyTorch's layout as it is
    const float beta = accumulate || written ? 1.f : 0.f;
    device_.mixedGemm(Trans::kYes, Trans::kNo, out_channels_, k, rows, grad_in_.input(),
                      out_channels_, input_in_.input(), k, beta, dw, k);
    written = true;
    if (!dx) continue;
    // d columns (n, K) = dy (n, Cout) . W (Cout, K), gathered back onto these images
    float* column_grads = column_grads_.ensure<float>(static_cast<size_t>(rows) * k);
    device_.mixedGemm(Trans::kNo, Trans::kNo, rows, k, out_channels_, grad_in_.input(),
                      out_channels_, weight_in_.input(), k, 0.f, column_grads, k);
    cuda::check(cudaSetDevice(index_), "set device (conv)");
    cuda::col2im(column_grads, s_, images, dx + static_cast<size_t>(first) * input_.size());
  }
  if (!written && !accumulate) device_.fill(dw, weights_, 0.f);  // an empty batch
}

}  // namespace

std::unique_ptr<ConvKernel> makeCudaConvKernel(const ConvSpec& spec, const ComputeDevice& device,
                                               int index) {
  return std::make_unique<CudaConvKernel>(spec, device, index);
}

}  // namespace ranklab
