#include "engine/model/cpu_conv_kernel.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/conv.h"
#include "kernels/cpu/elementwise.h"

namespace ranklab {
namespace {

using kernels::Trans;

class CpuConvKernel : public ConvKernel {
 public:
  explicit CpuConvKernel(const ConvSpec& spec)
      : g_{spec.input.height, spec.input.width, spec.input.channels, spec.kernel, spec.kernel / 2},
        out_channels_(spec.out_channels),
        weights_(static_cast<size_t>(spec.out_channels) * g_.columns()) {}

  void forward(const float* x, const float* w, const float* b, float* y, int batch,
               kernels::Precision precision) override;
  void backward(const float* x, const float* w, const float* dy, float* dx, float* dw, float* db,
                int batch, kernels::Precision precision, bool accumulate) override;
  std::vector<kernels::GemmShape> gemms(int batch) const override;

 private:
  int rowsPerChunk() const;
  int64_t rows(int batch) const {
    return static_cast<int64_t>(batch) * g_.outHeight() * g_.outWidth();
  }
  size_t paddedSize(int batch) const {
    return static_cast<size_t>(batch) * (g_.height + 2 * g_.padding) * (g_.width + 2 * g_.padding) *
           g_.channels;
  }
  // fp32 products read the im2col matrix in place from padded_ (kernels::inPlaceConvGemm).
  bool usesInPlaceGemm(int rows, kernels::Precision precision) const {
    return precision == kernels::Precision::kFp32 &&
           kernels::inPlaceConvGemm(rows, out_channels_, g_.columns());
  }

  kernels::ConvGeometry g_;
  int out_channels_;
  size_t weights_;
  std::vector<float> padded_;              // (B, H+2p, W+2p, Cin): the input with its zero border
  std::vector<float> padded_grad_;         // the same shape, for dx
  std::vector<float> columns_;             // (rows of one chunk, k*k*Cin): im2col of a chunk
  std::vector<float> packed_weight_;       // (Cout, k, k, Cin): W in im2col's column order
  std::vector<float> packed_weight_t_;     // (k, k, Cin, Cout): its transpose, for forward
  std::vector<float> packed_weight_grad_;  // (k, k, Cin, Cout): dW^T, added into PyTorch's order
  // The products' inputs in the compute precision: packed_weight_t_ (forward), the im2col
  // chunk, the output gradient, and packed_weight_ (the input gradient).
  kernels::GemmOperand weight_in_, input_in_, grad_in_, packed_weight_in_;
};

int CpuConvKernel::rowsPerChunk() const {
  // Enough output pixels per GEMM to keep it efficient, few enough that im2col stays in cache.
  constexpr size_t kColumnFloats = size_t{1} << 18;
  return static_cast<int>(std::max<size_t>(64, kColumnFloats / g_.columns()));
}

std::vector<kernels::GemmShape> CpuConvKernel::gemms(int batch) const {
  const int k = g_.columns();
  const int n = static_cast<int>(std::min<int64_t>(rowsPerChunk(), rows(batch)));
  return {{"forward", Trans::kNo, Trans::kNo, n, out_channels_, k},
          {"weight grad", Trans::kYes, Trans::kNo, k, out_channels_, n},
          {"input grad", Trans::kNo, Trans::kNo, n, k, out_channels_}};
}

void CpuConvKernel::forward(const float* x, const float* w, const float* b, float* y, int batch,
                            kernels::Precision precision) {
  const int k = g_.columns();
  const int64_t total = rows(batch);
  const int chunk = rowsPerChunk();
  columns_.resize(static_cast<size_t>(std::min<int64_t>(chunk, total)) * k);
  packed_weight_.resize(weights_);
  kernels::packConvWeight(w, packed_weight_.data(), out_channels_, g_.channels,
                          g_.kernel * g_.kernel);
  packed_weight_t_.resize(weights_);
  kernels::transposeEach(packed_weight_.data(), packed_weight_t_.data(), 1, out_channels_, k);
  // The GEMM operands in the compute precision: the weight is cast once per step.
  weight_in_.set(precision, packed_weight_t_.data(), weights_);
  padded_.resize(paddedSize(batch));
  kernels::padImage(x, padded_.data(), batch, g_);
  const bool in_place =
      usesInPlaceGemm(static_cast<int>(std::min<int64_t>(chunk, total)), precision);
  for (int64_t first = 0; first < total; first += chunk) {
    const int n = static_cast<int>(std::min<int64_t>(chunk, total - first));
    // y rows (n, Cout) = columns (n, K) . W^T (K, Cout) + b
    float* out = y + first * out_channels_;
    if (in_place) {
      kernels::convForwardInPlace(padded_.data(), g_, first, n, packed_weight_t_.data(),
                                  out_channels_, out);
    } else {
      kernels::im2col(padded_.data(), g_, first, n, columns_.data());
      input_in_.set(precision, columns_.data(), static_cast<size_t>(n) * k);
      kernels::gemm(Trans::kNo, Trans::kNo, n, out_channels_, k, 1.f, input_in_, k, weight_in_,
                    out_channels_, 0.f, out, out_channels_);
    }
    kernels::addBiasRows(out, b, n, out_channels_);
  }
}

void CpuConvKernel::backward(const float*, const float*, const float* dy, float* dx, float* dw,
                             float* db, int batch, kernels::Precision precision, bool accumulate) {
  const int k = g_.columns();
  const int64_t total = rows(batch);
  const int chunk = rowsPerChunk();
  columns_.resize(static_cast<size_t>(std::min<int64_t>(chunk, total)) * k);
  packed_weight_grad_.resize(weights_);
  // packed_weight_ and padded_ still hold this batch's weight and input from forward().
  packed_weight_in_.set(precision, packed_weight_.data(), weights_);
  if (dx) padded_grad_.assign(paddedSize(batch), 0.f);
  // The conv's gradients are small: zeroed here, while about to be used, when told to write.
  if (!accumulate) {
    std::fill(dw, dw + weights_, 0.f);
    std::fill(db, db + out_channels_, 0.f);
  }
  const bool in_place =
      usesInPlaceGemm(static_cast<int>(std::min<int64_t>(chunk, total)), precision);
  for (int64_t first = 0; first < total; first += chunk) {
    const int n = static_cast<int>(std::min<int64_t>(chunk, total - first));
    const float* grad_out = dy + first * out_channels_;  // (n, Cout)
    grad_in_.set(precision, grad_out, static_cast<size_t>(n) * out_channels_);
    // dW^T (K, Cout) (+)= columns^T (K, n) . dy (n, Cout), in im2col's column order
    const float beta = first == 0 ? 0.f : 1.f;
    if (in_place) {
      kernels::convWeightGradInPlace(padded_.data(), g_, first, n, grad_out, out_channels_, beta,
                                     packed_weight_grad_.data());
    } else {
      kernels::im2col(padded_.data(), g_, first, n, columns_.data());
      input_in_.set(precision, columns_.data(), static_cast<size_t>(n) * k);
      kernels::gemm(Trans::kYes, Trans::kNo, k, out_channels_, n, 1.f, input_in_, k, grad_in_,
                    out_channels_, beta, packed_weight_grad_.data(), out_channels_);
    }
    kernels::sumRowsInto(db, grad_out, n, out_channels_);
    if (!dx) continue;
    // d columns (n, K) = dy (n, Cout) . W (Cout, K), then scattered back onto the image
    kernels::gemm(Trans::kNo, Trans::kNo, n, k, out_channels_, 1.f, grad_in_, out_channels_,
                  packed_weight_in_, k, 0.f, columns_.data(), k);
    kernels::col2imAdd(columns_.data(), g_, first, n, padded_grad_.data());
  }
  if (dx) kernels::cropImage(padded_grad_.data(), dx, batch, g_);
  kernels::unpackConvWeightGradAdd(packed_weight_grad_.data(), dw, out_channels_, g_.channels,
                                   g_.kernel * g_.kernel);
}

}  // namespace

std::unique_ptr<ConvKernel> makeCpuConvKernel(const ConvSpec& spec) {
  return std::make_unique<CpuConvKernel>(spec);
}

}  // namespace ranklab
