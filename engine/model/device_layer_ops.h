// The passes the layers written once (layers.h) run over a device's memory: each device
// computes them with its own kernels (kernels/cpu, kernels/cuda), so a layer is one class for
// every device and never touches the device's memory itself. All pointers are the device's.
// One of a ComputeDevice's concerns (compute_device.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "engine/model/conv_kernel.h"
#include "engine/model/loss_head.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/mixed_gemm.h"

namespace ranklab {

// A matrix product's input on the device in its compute precision (AMP): the fp32 values,
// and for bf16 or fp16 their cast copy (device_gemm_operand.h makes one).
struct DeviceGemmInput {
  kernels::Precision precision = kernels::Precision::kFp32;
  const float* f32 = nullptr;
  const uint16_t* low = nullptr;  // bf16 or fp16 bits; null in fp32
};

class DeviceLayerOps {
 public:
  virtual ~DeviceLayerOps() = default;
  // out (n) = x's bf16 or fp16 bits (kernels/cpu/low_precision.h's rounding).
  virtual void castFromFp32(kernels::Precision precision, const float* x, uint16_t* out,
                            size_t n) const = 0;
  // C (m, n) = op(A) (m, k) . op(B) (k, n) + beta * C, A and B in their shared precision,
  // accumulated in fp32; row-major as kernels::sgemm.
  virtual void mixedGemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k,
                         const DeviceGemmInput& a, int lda, const DeviceGemmInput& b, int ldb,
                         float beta, float* c, int ldc) const = 0;
  // y (rows, out) = x (rows, in) . W^T (in, out) + bias (out), then max(y, 0) where `relu`.
  // Each device keeps its own order, and so its bits: the CPU adds the bias before the
  // product (PyTorch's addmm; oneDNN's fused epilogue in fp32), CUDA after it.
  virtual void linearForward(const DeviceGemmInput& x, const DeviceGemmInput& w, const float* bias,
                             float* y, int rows, int in, int out, bool relu) const = 0;
  // db (cols) = the column sums of dy (rows, cols); added to db where `accumulate`.
  virtual void sumRows(float* db, const float* dy, int rows, int cols, bool accumulate) const = 0;
  // dz (rows, cols) = dy where y > 0, else 0; db = its column sums, as sumRows.
  virtual void reluMaskSumRows(const float* dy, const float* y, float* dz, float* db, int rows,
                               int cols, bool accumulate) const = 0;
  // y = max(x, 0).
  virtual void relu(const float* x, float* y, size_t n) const = 0;
  // dx = dy where y > 0, else 0.
  virtual void reluGradient(const float* dy, const float* y, float* dx, size_t n) const = 0;
  // y (B, H/2, W/2, C) = the largest of each 2x2 window of x (B, H, W, C), floor mode;
  // argmax (B, H/2, W/2, C) bytes: which of the four taps won, for backward.
  virtual void maxPool2x2Forward(const float* x, float* y, uint8_t* argmax, int batch, int height,
                                 int width, int channels) const = 0;
  // dx (B, H, W, C) = dy routed to the winning taps, 0 elsewhere (written, not added).
  virtual void maxPool2x2Backward(const float* dy, const uint8_t* argmax, float* dx, int batch,
                                  int height, int width, int channels) const = 0;
  // scale (n) = 0 with probability p, else 1 / (1 - p): the same bits on every device for a
  // key, so a GPU's dropout follows the CPU's.
  virtual void dropoutMask(uint64_t key, float p, float* scale, size_t n) const = 0;
  // out = a * b, elementwise.
  virtual void multiply(const float* a, const float* b, float* out, size_t n) const = 0;
  // A convolution of `spec` in this device's own algorithm (conv_kernel.h).
  virtual std::unique_ptr<ConvKernel> makeConvKernel(const ConvSpec& spec) const = 0;
  // Device bytes softmaxXentForward works in for `rows` rows (0: none).
  virtual size_t softmaxXentWorkspaceBytes(int rows) const = 0;
  // probs (rows, classes) = the softmax of logits, per row the max subtracted and the sums in
  // double; returns the summed loss and the rows whose largest logit is the label (labels:
  // device bytes, each below classes). Waits for the totals.
  virtual BatchLoss softmaxXentForward(const float* logits, const uint8_t* labels, float* probs,
                                       int rows, int classes, void* workspace) const = 0;
  // dlogits (rows, classes) = (probs - onehot(labels)) * scale.
  virtual void softmaxXentBackward(float* dlogits, const float* probs, const uint8_t* labels,
                                   int rows, int classes, float scale) const = 0;
  // y (batch, length, width) = token_table[token] + position_table[position]; tokens are
  // ids as floats, each checked below vocab (std::out_of_range naming it and its position).
  virtual void embeddingForward(const float* tokens, const float* token_table,
                                const float* position_table, float* y, int batch, int length,
                                int width, int vocab) const = 0;
  // dtoken_table += dy's rows at their tokens (always added: a tied head writes first);
  // dposition_table = (or += where accumulate_positions) dy summed over the batch.
  virtual void embeddingBackward(const float* tokens, const float* dy, float* dtoken_table,
                                 float* dposition_table, int batch, int length, int width,
                                 int vocab, bool accumulate_positions) const = 0;
  // Device floats layerNormBackward works in for rows of `width` (0: none).
  virtual size_t layerNormScratchFloats(size_t rows, int width) const = 0;
  // y = (x - mean) * rstd * weight + bias per row, keeping each row's mean and rstd.
  virtual void layerNormForward(const float* x, const float* weight, const float* bias, float* y,
                                float* mean, float* rstd, size_t rows, int width,
                                float eps) const = 0;
  // dx (written, where not null) from dy; dweight, dbias = (or += where accumulate) their
  // sums over the rows.
  virtual void layerNormBackward(const float* x, const float* weight, const float* mean,
                                 const float* rstd, const float* dy, float* dx, float* dweight,
                                 float* dbias, size_t rows, int width, bool accumulate,
                                 float* scratch) const = 0;
  // y = the exact GELU of x; slope (where not null) = GELU'(x), for backward.
  virtual void geluForward(const float* x, float* y, float* slope, size_t n) const = 0;
  // dx = dy * slope.
  virtual void geluBackward(const float* slope, const float* dy, float* dx, size_t n) const = 0;
  // Device floats causalAttentionBackward works in (0: none).
  virtual size_t attentionScratchFloats(int heads, int length) const = 0;
  // Causal self-attention of `batch` sequences over rows of q|k|v (3 * width), the heads side
  // by side in y (width); probs (batch, heads, length, length) kept for backward.
  virtual void causalAttentionForward(const float* qkv, float* y, float* probs, int batch,
                                      int length, int width, int heads) const = 0;
  // dqkv (written) from dy, the forward's qkv and probs.
  virtual void causalAttentionBackward(const float* qkv, const float* probs, const float* dy,
                                       float* dqkv, int batch, int length, int width, int heads,
                                       float* scratch) const = 0;
  // Each of `batch` (rows, cols) matrices -> its (cols, rows) transpose.
  virtual void transposeEach(const float* x, float* y, int batch, size_t rows,
                             size_t cols) const = 0;
};

}  // namespace ranklab
