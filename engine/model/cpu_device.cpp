// The CPU device: the layers of engine/model/layers.h and host vectors.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "comm/codecs/qsgd_codec.h"
#include "engine/model/compute_device.h"
#include "engine/model/cpu_conv_kernel.h"
#include "engine/model/layers.h"
#include "engine/model/softmax_cross_entropy.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/linear_forward.h"
#include "kernels/cpu/low_precision.h"
#include "kernels/cpu/sign_pack.h"
#include "kernels/cpu/sparse_select.h"
#include "kernels/cpu/transformer.h"

namespace ranklab {
namespace {

class HostBuffer : public DeviceBuffer {
 public:
  explicit HostBuffer(size_t floats) : values_(floats, 0.f) {}
  float* data() override { return values_.data(); }
  size_t size() const override { return values_.size(); }

 private:
  std::vector<float> values_;
};

class CpuDevice : public ComputeDevice {
 public:
  std::string name() const override { return "cpu"; }

  std::unique_ptr<Layer> makeLayer(const LayerRequest& request) const override {
    return makeLayerOn(request, *this);
  }
  std::unique_ptr<ConvKernel> makeConvKernel(const ConvSpec& spec) const override {
    return makeCpuConvKernel(spec);
  }

  std::unique_ptr<LossHead> makeLossHead() const override {
    return std::make_unique<SoftmaxCrossEntropy>(*this);
  }

  void castFromFp32(kernels::Precision precision, const float* x, uint16_t* out,
                    size_t n) const override {
    if (precision == kernels::Precision::kBf16) return kernels::floatToBf16(x, out, n);
    if (precision == kernels::Precision::kFp16) return kernels::floatToFp16(x, out, n);
    throw std::logic_error("castFromFp32: the precision must be bf16 or fp16");
  }
  void mixedGemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k,
                 const DeviceGemmInput& a, int lda, const DeviceGemmInput& b, int ldb, float beta,
                 float* c, int ldc) const override {
    if (a.precision != b.precision) throw std::logic_error("gemm: operands in two precisions");
    kernels::gemmIn(a.precision, trans_a, trans_b, m, n, k, 1.f, a.f32, a.low, lda, b.f32, b.low,
                    ldb, beta, c, ldc);
  }
  void linearForward(const DeviceGemmInput& x, const DeviceGemmInput& w, const float* bias,
                     float* y, int rows, int in, int out, bool relu) const override {
    if (x.precision == kernels::Precision::kFp32)
      return kernels::linearForward(x.f32, w.f32, bias, y, rows, in, out, relu);
    // As PyTorch's addmm: the product adds onto the bias rows (beta 1), so y is written once
    // before it instead of zeroed and then added to.
    kernels::copyBiasRows(y, bias, rows, out);
    mixedGemm(kernels::Trans::kNo, kernels::Trans::kYes, rows, out, in, x, in, w, in, 1.f, y, out);
    if (relu) kernels::reluForward(y, y, static_cast<size_t>(rows) * out);
  }
  void sumRows(float* db, const float* dy, int rows, int cols, bool accumulate) const override {
    if (!accumulate) std::fill(db, db + cols, 0.f);
    kernels::sumRowsInto(db, dy, rows, cols);
  }
  void reluMaskSumRows(const float* dy, const float* y, float* dz, float* db, int rows, int cols,
                       bool accumulate) const override {
    if (!accumulate) std::fill(db, db + cols, 0.f);
    kernels::reluBackwardSumRows(dy, y, dz, db, rows, cols);
  }
  void relu(const float* x, float* y, size_t n) const override { kernels::reluForward(x, y, n); }
  void reluGradient(const float* dy, const float* y, float* dx, size_t n) const override {
    kernels::reluBackward(dy, y, dx, n);
  }
  void maxPool2x2Forward(const float* x, float* y, uint8_t* argmax, int batch, int height,
                         int width, int channels) const override {
    kernels::maxPool2x2Forward(x, y, argmax, batch, height, width, channels);
  }
  void maxPool2x2Backward(const float* dy, const uint8_t* argmax, float* dx, int batch, int height,
                          int width, int channels) const override {
    kernels::maxPool2x2Backward(dy, argmax, dx, batch, height, width, channels);
  }
  void dropoutMask(uint64_t key, float p, float* scale, size_t n) const override {
    kernels::dropoutMask(key, p, scale, n);
  }
  void multiply(const float* a, const float* b, float* out, size_t n) const override {
    kernels::multiply(a, b, out, n);
  }
  size_t softmaxXentWorkspaceBytes(int) const override { return 0; }
  BatchLoss softmaxXentForward(const float* logits, const uint8_t* labels, float* probs, int rows,
                               int classes, void*) const override {
    const kernels::XentResult result =
        kernels::softmaxXentForward(logits, labels, probs, rows, classes);
    return {result.loss_sum, result.correct};
  }
  void softmaxXentBackward(float* dlogits, const float* probs, const uint8_t* labels, int rows,
                           int classes, float scale) const override {
    kernels::softmaxXentBackward(dlogits, probs, labels, rows, classes, scale);
  }
  void embeddingForward(const float* tokens, const float* token_table, const float* position_table,
                        float* y, int batch, int length, int width, int vocab) const override {
    kernels::embeddingForward(tokens, token_table, position_table, y, batch, length, width, vocab);
  }
  void embeddingBackward(const float* tokens, const float* dy, float* dtoken_table,
                         float* dposition_table, int batch, int length, int width, int,
                         bool accumulate_positions) const override {
    kernels::embeddingBackward(tokens, dy, dtoken_table, dposition_table, batch, length, width,
                               accumulate_positions);
  }
  size_t layerNormScratchFloats(size_t, int) const override { return 0; }
  void layerNormForward(const float* x, const float* weight, const float* bias, float* y,
                        float* mean, float* rstd, size_t rows, int width,
                        float eps) const override {
    kernels::layerNormForward(x, weight, bias, y, mean, rstd, rows, width, eps);
  }
  void layerNormBackward(const float* x, const float* weight, const float* mean, const float* rstd,
                         const float* dy, float* dx, float* dweight, float* dbias, size_t rows,
                         int width, bool accumulate, float*) const override {
    kernels::layerNormBackward(x, weight, mean, rstd, dy, dx, dweight, dbias, rows, width,
                               accumulate);
  }
  void geluForward(const float* x, float* y, float* slope, size_t n) const override {
    kernels::geluForward(x, y, slope, n);
  }
  void geluBackward(const float* slope, const float* dy, float* dx, size_t n) const override {
    kernels::geluBackward(slope, dy, dx, n);
  }
  size_t attentionScratchFloats(int, int) const override { return 0; }
  void causalAttentionForward(const float* qkv, float* y, float* probs, int batch, int length,
                              int width, int heads) const override {
    kernels::causalAttentionForward(qkv, y, probs, batch, length, width, heads);
  }
  void causalAttentionBackward(const float* qkv, const float* probs, const float* dy, float* dqkv,
                               int batch, int length, int width, int heads, float*) const override {
    kernels::causalAttentionBackward(qkv, probs, dy, dqkv, batch, length, width, heads);
  }
  void transposeEach(const float* x, float* y, int batch, size_t rows, size_t cols) const override {
    kernels::transposeEach(x, y, batch, rows, cols);
  }

  std::unique_ptr<DeviceBuffer> allocate(size_t floats) const override {
    return std::make_unique<HostBuffer>(floats);
  }

  bool hostMemory() const override { return true; }
  void upload(float* to, const float* host, size_t n) const override { copy(to, host, n); }
  void download(float* host, const float* from, size_t n) const override { copy(host, from, n); }
  void uploadBytes(uint8_t* to, const uint8_t* host, size_t n) const override {
    if (n > 0 && to != host) std::memmove(to, host, n);
  }
  void copy(float* to, const float* from, size_t n) const override {
    if (n > 0 && to != from) std::memmove(to, from, n * sizeof(float));
  }
  void fill(float* to, size_t n, float value) const override { std::fill(to, to + n, value); }
  void sgdUpdate(float* params, const float* grads, float* velocity, size_t n, float lr,
                 float momentum, float weight_decay, bool nesterov) const override {
    kernels::sgdUpdate(params, grads, velocity, n, lr, momentum, weight_decay, nesterov);
  }
  void adamUpdate(float* params, const float* grads, float* first_moment, float* second_moment,
                  size_t n, const kernels::AdamScalars& s) const override {
    kernels::adamUpdate(params, grads, first_moment, second_moment, n, s);
  }
  bool scaleAndCheckFinite(float* grads, size_t n, float factor) const override {
    return kernels::scaleAndCheckFinite(grads, n, factor);
  }
  double sumOfSquares(const float* x, size_t n) const override {
    double sums[4] = {0, 0, 0, 0};  // four chains: the adds' latency, not one chain's, bounds it
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (size_t k = 0; k < 4; ++k) sums[k] += static_cast<double>(x[i + k]) * x[i + k];
    for (; i < n; ++i) sums[0] += static_cast<double>(x[i]) * x[i];
    return (sums[0] + sums[1]) + (sums[2] + sums[3]);
  }
  void add(float* to, const float* from, size_t n) const override {
    for (size_t i = 0; i < n; ++i) to[i] += from[i];
  }
  void accumulateMomentum(float* velocity, float* grads, size_t n, float momentum) const override {
    for (size_t i = 0; i < n; ++i) grads[i] = velocity[i] = momentum * velocity[i] + grads[i];
  }
  void scatter(float* to, size_t n, const uint32_t* host_indices, const float* host_values,
               size_t k) const override {
    kernels::checkScatterIndices(host_indices, k, n);
    for (size_t j = 0; j < k; ++j) to[host_indices[j]] = host_values[j];
  }
  void selectTopk(const float* x, size_t n, size_t k, std::vector<uint32_t>& host_indices,
                  std::vector<float>& host_values) const override {
    std::vector<uint32_t> scratch;
    kernels::selectTopk(x, n, k, host_indices, host_values, scratch);
  }
  void selectAtLeast(const float* x, size_t n, float threshold, std::vector<uint32_t>& host_indices,
                     std::vector<float>& host_values) const override {
    kernels::selectAtLeast(x, n, threshold, host_indices, host_values);
  }
  void gather(const float* x, const uint32_t* host_indices, size_t k,
              float* host_values) const override {
    for (size_t j = 0; j < k; ++j) host_values[j] = x[host_indices[j]];
  }
  void encodeSign(const float* x, size_t n, size_t bucket, std::vector<uint8_t>& host_payload,
                  float* residual) const override {
    host_payload.resize(kernels::signPayloadBytes(n, bucket));
    kernels::signEncode(x, n, bucket, host_payload.data());
    if (residual) kernels::signLeftOver(x, n, bucket, host_payload.data(), residual);
  }
  void encodeHalf(const float* x, size_t n, kernels::Precision precision,
                  std::vector<uint8_t>& host_payload, float* residual) const override {
    host_payload.resize(n * sizeof(uint16_t));
    if (n == 0) return;
    auto* halves = reinterpret_cast<uint16_t*>(host_payload.data());
    if (precision == kernels::Precision::kBf16) {
      kernels::floatToBf16(x, halves, n);
    } else if (precision == kernels::Precision::kFp16) {
      kernels::floatToFp16(x, halves, n);
    } else {
      throw std::invalid_argument("encodeHalf: the precision must be bf16 or fp16");
    }
    if (!residual) return;
    std::vector<float> sent(n);
    if (precision == kernels::Precision::kBf16) {
      kernels::bf16ToFloat(halves, sent.data(), n);
    } else {
      kernels::fp16ToFloat(halves, sent.data(), n);
    }
    for (size_t i = 0; i < n; ++i) residual[i] = x[i] - sent[i];
  }
  void encodeQsgd(const float* x, size_t n, int bits, size_t bucket, kernels::QsgdRounding rounding,
                  std::vector<uint8_t>& host_payload, float* residual) const override {
    std::vector<float> scales;
    std::vector<uint32_t> codes;
    qsgdEncode(x, n, bits, bucket, rounding, scales, codes, host_payload);
    if (residual) kernels::qsgdLeftOver(x, n, bits, bucket, scales.data(), codes.data(), residual);
  }
  void gemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k, float alpha,
            const float* a, int lda, const float* b, int ldb, float beta, float* c,
            int ldc) const override {
    kernels::sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void synchronize() const override {}
};

}  // namespace

const ComputeDevice& cpuDevice() {
  static const CpuDevice device;
  return device;
}

}  // namespace ranklab
