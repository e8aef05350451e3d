// Test support: compute devices that compute on the CPU but keep a ledger of what they were
// asked (layers, buffers, uploads, updates), and one whose memory the engine must treat as
// a GPU's (hostMemory() false), so the staging paths run on a machine without a GPU.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/compute_device.h"

namespace ranklab::testing {

class LedgerDevice : public ComputeDevice {
 public:
  std::string name() const override { return "ledger"; }
  std::unique_ptr<Layer> makeLayer(const LayerRequest& request) const override {
    layers.push_back(request.name + ":" + request.input.str());
    return cpuDevice().makeLayer(request);
  }
  std::unique_ptr<LossHead> makeLossHead() const override {
    ++heads;
    return cpuDevice().makeLossHead();
  }
  std::unique_ptr<DeviceBuffer> allocate(size_t floats) const override {
    buffers.push_back(floats);
    return cpuDevice().allocate(floats);
  }
  // The layers' passes: the host's (its layers are the CPU's, so none of them come here).
  void castFromFp32(kernels::Precision precision, const float* x, uint16_t* out,
                    size_t n) const override {
    cpuDevice().castFromFp32(precision, x, out, n);
  }
  void mixedGemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k,
                 const DeviceGemmInput& a, int lda, const DeviceGemmInput& b, int ldb, float beta,
                 float* c, int ldc) const override {
    cpuDevice().mixedGemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc);
  }
  void linearForward(const DeviceGemmInput& x, const DeviceGemmInput& w, const float* bias,
                     float* y, int rows, int in, int out, bool relu) const override {
    cpuDevice().linearForward(x, w, bias, y, rows, in, out, relu);
  }
  void sumRows(float* db, const float* dy, int rows, int cols, bool accumulate) const override {
    cpuDevice().sumRows(db, dy, rows, cols, accumulate);
  }
  void reluMaskSumRows(const float* dy, const float* y, float* dz, float* db, int rows, int cols,
                       bool accumulate) const override {
    cpuDevice().reluMaskSumRows(dy, y, dz, db, rows, cols, accumulate);
  }
  std::unique_ptr<ConvKernel> makeConvKernel(const ConvSpec& spec) const override {
    return cpuDevice().makeConvKernel(spec);
  }
  size_t softmaxXentWorkspaceBytes(int rows) const override {
    return cpuDevice().softmaxXentWorkspaceBytes(rows);
  }
  BatchLoss softmaxXentForward(const float* logits, const uint8_t* labels, float* probs, int rows,
                               int classes, void* workspace) const override {
    return cpuDevice().softmaxXentForward(logits, labels, probs, rows, classes, workspace);
  }
  void softmaxXentBackward(float* dlogits, const float* probs, const uint8_t* labels, int rows,
                           int classes, float scale) const override {
    cpuDevice().softmaxXentBackward(dlogits, probs, labels, rows, classes, scale);
  }
  void embeddingForward(const float* tokens, const float* token_table, const float* position_table,
                        float* y, int batch, int length, int width, int vocab) const override {
    cpuDevice().embeddingForward(tokens, token_table, position_table, y, batch, length, width,
                                 vocab);
  }
  void embeddingBackward(const float* tokens, const float* dy, float* dtoken_table,
                         float* dposition_table, int batch, int length, int width, int vocab,
                         bool accumulate_positions) const override {
    cpuDevice().embeddingBackward(tokens, dy, dtoken_table, dposition_table, batch, length, width,
                                  vocab, accumulate_positions);
  }
  size_t layerNormScratchFloats(size_t rows, int width) const override {
    return cpuDevice().layerNormScratchFloats(rows, width);
  }
  void layerNormForward(const float* x, const float* weight, const float* bias, float* y,
                        float* mean, float* rstd, size_t rows, int width,
                        float eps) const override {
    cpuDevice().layerNormForward(x, weight, bias, y, mean, rstd, rows, width, eps);
  }
  void layerNormBackward(const float* x, const float* weight, const float* mean, const float* rstd,
                         const float* dy, float* dx, float* dweight, float* dbias, size_t rows,
                         int width, bool accumulate, float* scratch) const override {
    cpuDevice().layerNormBackward(x, weight, mean, rstd, dy, dx, dweight, dbias, rows, width,
                                  accumulate, scratch);
  }
  void geluForward(const float* x, float* y, float* slope, size_t n) const override {
    cpuDevice().geluForward(x, y, slope, n);
  }
  void geluBackward(const float* slope, const float* dy, float* dx, size_t n) const override {
    cpuDevice().geluBackward(slope, dy, dx, n);
  }
  size_t attentionScratchFloats(int heads, int length) const override {
    return cpuDevice().attentionScratchFloats(heads, length);
  }
  void causalAttentionForward(const float* qkv, float* y, float* probs, int batch, int length,
                              int width, int heads) const override {
    cpuDevice().causalAttentionForward(qkv, y, probs, batch, length, width, heads);
  }
  void causalAttentionBackward(const float* qkv, const float* probs, const float* dy, float* dqkv,
                               int batch, int length, int width, int heads,
                               float* scratch) const override {
    cpuDevice().causalAttentionBackward(qkv, probs, dy, dqkv, batch, length, width, heads, scratch);
  }
  void relu(const float* x, float* y, size_t n) const override { cpuDevice().relu(x, y, n); }
  void reluGradient(const float* dy, const float* y, float* dx, size_t n) const override {
    cpuDevice().reluGradient(dy, y, dx, n);
  }
  void maxPool2x2Forward(const float* x, float* y, uint8_t* argmax, int batch, int height,
                         int width, int channels) const override {
    cpuDevice().maxPool2x2Forward(x, y, argmax, batch, height, width, channels);
  }
  void maxPool2x2Backward(const float* dy, const uint8_t* argmax, float* dx, int batch, int height,
                          int width, int channels) const override {
    cpuDevice().maxPool2x2Backward(dy, argmax, dx, batch, height, width, channels);
  }
  void dropoutMask(uint64_t key, float p, float* scale, size_t n) const override {
    cpuDevice().dropoutMask(key, p, scale, n);
  }
  void multiply(const float* a, const float* b, float* out, size_t n) const override {
    cpuDevice().multiply(a, b, out, n);
  }
  void transposeEach(const float* x, float* y, int batch, size_t rows, size_t cols) const override {
    cpuDevice().transposeEach(x, y, batch, rows, cols);
  }
  // Memory and update loops: the host's.
  bool hostMemory() const override { return true; }
  void upload(float* to, const float* host, size_t n) const override {
    ++uploads;
    cpuDevice().upload(to, host, n);
  }
  void uploadAsync(float* to, const float* host, size_t n) const override {
    ++async_uploads;
    upload(to, host, n);
  }
  void download(float* host, const float* from, size_t n) const override {
    ++downloads;
    cpuDevice().download(host, from, n);
  }
  void uploadBytes(uint8_t* to, const uint8_t* host, size_t n) const override {
    cpuDevice().uploadBytes(to, host, n);
  }
  void copy(float* to, const float* from, size_t n) const override {
    cpuDevice().copy(to, from, n);
  }
  void fill(float* to, size_t n, float value) const override { cpuDevice().fill(to, n, value); }
  void sgdUpdate(float* params, const float* grads, float* velocity, size_t n, float lr,
                 float momentum, float weight_decay, bool nesterov) const override {
    ++updates;
    cpuDevice().sgdUpdate(params, grads, velocity, n, lr, momentum, weight_decay, nesterov);
  }
  void adamUpdate(float* params, const float* grads, float* first_moment, float* second_moment,
                  size_t n, const kernels::AdamScalars& s) const override {
    ++updates;
    cpuDevice().adamUpdate(params, grads, first_moment, second_moment, n, s);
  }
  bool scaleAndCheckFinite(float* grads, size_t n, float factor) const override {
    return cpuDevice().scaleAndCheckFinite(grads, n, factor);
  }
  double sumOfSquares(const float* x, size_t n) const override {
    return cpuDevice().sumOfSquares(x, n);
  }
  void add(float* to, const float* from, size_t n) const override { cpuDevice().add(to, from, n); }
  void accumulateMomentum(float* velocity, float* grads, size_t n, float momentum) const override {
    cpuDevice().accumulateMomentum(velocity, grads, n, momentum);
  }
  void scatter(float* to, size_t n, const uint32_t* host_indices, const float* host_values,
               size_t k) const override {
    cpuDevice().scatter(to, n, host_indices, host_values, k);
  }
  void selectTopk(const float* x, size_t n, size_t k, std::vector<uint32_t>& host_indices,
                  std::vector<float>& host_values) const override {
    cpuDevice().selectTopk(x, n, k, host_indices, host_values);
  }
  void selectAtLeast(const float* x, size_t n, float threshold, std::vector<uint32_t>& host_indices,
                     std::vector<float>& host_values) const override {
    cpuDevice().selectAtLeast(x, n, threshold, host_indices, host_values);
  }
  void gather(const float* x, const uint32_t* host_indices, size_t k,
              float* host_values) const override {
    cpuDevice().gather(x, host_indices, k, host_values);
  }
  void encodeSign(const float* x, size_t n, size_t bucket, std::vector<uint8_t>& host_payload,
                  float* residual) const override {
    cpuDevice().encodeSign(x, n, bucket, host_payload, residual);
  }
  void encodeHalf(const float* x, size_t n, kernels::Precision precision,
                  std::vector<uint8_t>& host_payload, float* residual) const override {
    cpuDevice().encodeHalf(x, n, precision, host_payload, residual);
  }
  void encodeQsgd(const float* x, size_t n, int bits, size_t bucket, kernels::QsgdRounding rounding,
                  std::vector<uint8_t>& host_payload, float* residual) const override {
    cpuDevice().encodeQsgd(x, n, bits, bucket, rounding, host_payload, residual);
  }
  void gemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k, float alpha,
            const float* a, int lda, const float* b, int ldb, float beta, float* c,
            int ldc) const override {
    cpuDevice().gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void synchronize() const override {}
  // Counted from every rank's thread when ranks share the device.
  mutable std::atomic<int> updates = 0;
  mutable std::atomic<int> uploads = 0;  // async ones too
  mutable std::atomic<int> async_uploads = 0;
  mutable std::atomic<int> downloads = 0;
  mutable std::vector<std::string> layers;
  mutable std::vector<size_t> buffers;
  mutable int heads = 0;
};

// A device whose memory the engine may not read: like a GPU's, its inputs must be uploaded.
// (Its buffers are host memory here, so the test can still look at what arrived.)
class DetachedDevice : public LedgerDevice {
 public:
  std::string name() const override { return "detached"; }
  bool hostMemory() const override { return false; }
};

}  // namespace ranklab::testing
