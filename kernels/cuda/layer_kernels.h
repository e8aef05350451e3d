// The device kernels behind the CUDA device's layers (engine/model/cuda_layers.h): the twins
// of kernels/cpu/elementwise.h and conv.h, and matrix products through cuBLAS.
// Conventions:
// - every pointer is a device pointer unless its name says host; work is queued on the
//   calling thread's own default stream (per-thread, not the legacy stream; cuBLAS's too), on
//   the device current for that thread (cudaSetDevice), and every launch is checked: a
//   failure throws std::runtime_error naming the operation;
// - matrices are row-major, images channels-last (B, H, W, C), as on the CPU;
// - the im2col matrix's columns are in PyTorch's weight order (C, kh, kw), so a Conv2d
//   weight (Cout, Cin, k, k) is the GEMM operand as it lies, with no packing;
// - low-precision values (bf16, fp16) are 16-bit patterns held in uint16_t.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/mixed_gemm.h"

namespace ranklab::cuda {

// False, with `why`, when this build's kernels cannot run on `device` (no kernel image for
// its architecture, or the device cannot be used). Leaves `device` current.
bool kernelsRunOn(int device, std::string* why);

// ---- matrix products (cuBLAS, one handle per thread and device) ----

// C (M, N) = alpha * op(A) (M, K) . op(B) (K, N) + beta * C, row-major (fp32 products:
// cuda::sgemm, kernels/cuda/cuda_kernels.h), with A and B in `precision` (kBf16 or kFp16),
// accumulated in fp32 into fp32 C; as kernels::gemmFp16, an fp16 product is rounded to fp16 (inf
// beyond 65504) before alpha and beta apply, so the loss scaler sees the overflow fp16 AMP would
// have.
void gemmLowPrecision(kernels::Precision precision, kernels::Trans trans_a, kernels::Trans trans_b,
                      int m, int n, int k, float alpha, const uint16_t* a, int lda,
                      const uint16_t* b, int ldb, float beta, float* c, int ldc);
// out (n) = x (n) rounded to nearest even in `precision` (kBf16 or kFp16).
void castFromFp32(kernels::Precision precision, const float* x, uint16_t* out, size_t n);

// ---- bias and ReLU ----

// y (rows, cols) += bias (cols) in every row (none when bias is null), then y = max(y, 0)
// when relu.
void addBiasAndRelu(float* y, const float* bias, size_t rows, int cols, bool relu);
// y (n) = max(x, 0); y may be x.
void applyRelu(const float* x, float* y, size_t n);
// dx (n) = dy * (y > 0), y being the ReLU's output; written; dx may be dy.
void reluGradient(const float* dy, const float* y, float* dx, size_t n);
// dbias (cols) = (or += when accumulate) the column sums of dy (rows, cols). Summed in an order
// fixed by the shape (the same bits every call, not the CPU's); a tall matrix is split into
// runs of rows summed side by side, then the runs' sums.
void sumRows(float* dbias, const float* dy, size_t rows, int cols, bool accumulate);
// dz (rows, cols) = dy * (y > 0); dbias (cols) = (or +=) the column sums of dz, as sumRows.
void reluMaskSumRows(const float* dy, const float* y, float* dz, float* dbias, size_t rows,
                     int cols, bool accumulate);

// ---- convolution (stride 1, square kernel, zero padding on every side) ----

struct ConvShape {
  int height = 0, width = 0, channels = 0;  // input
  int kernel = 1;
  int padding = 0;
  int outHeight() const { return height + 2 * padding - kernel + 1; }
  int outWidth() const { return width + 2 * padding - kernel + 1; }
  int columns() const { return channels * kernel * kernel; }  // K of the GEMM
};

// col (images * outH * outW, C*k*k) = the receptive fields of every output pixel of
// `images` images of x (images, H, W, C), columns in (C, kh, kw) order; taps in the padding
// read 0 (no padded copy of the image is made).
void im2col(const float* x, const ConvShape& s, int images, float* col);
// dx (images, H, W, C) = im2col's adjoint applied to dcol: each input value gathers the
// gradients of the receptive fields it fell in. Written, not added.
void col2im(const float* dcol, const ConvShape& s, int images, float* dx);

// ---- pooling, dropout, layout ----

// 2x2 max pooling, stride 2, floor mode: x (B, H, W, C) -> y (B, H/2, W/2, C); argmax holds
// which tap (0..3, row-major) won. The first maximum wins ties; a NaN wins (propagates).
void maxPool2x2Forward(const float* x, float* y, uint8_t* argmax, int batch, int height, int width,
                       int channels);
// dx (B, H, W, C) = dy routed to the winning taps, 0 elsewhere (written, not added).
void maxPool2x2Backward(const float* dy, const uint8_t* argmax, float* dx, int batch, int height,
                        int width, int channels);

// scale (n) = 0 with probability p, else 1 / (1 - p): the bits of kernels::dropoutMask for the
// same key (the same hash of (key, i)).
void dropoutMask(uint64_t key, float p, float* scale, size_t n);
// out (n) = a * b; out may alias a or b.
void multiply(const float* a, const float* b, float* out, size_t n);

// Each of `batch` (rows, cols) matrices -> its (cols, rows) transpose.
void transposeEach(const float* x, float* y, int batch, size_t rows, size_t cols);

// ---- softmax cross-entropy ----

struct XentTotals {
  double loss_sum = 0;
  int64_t correct = 0;
};
// Device bytes softmaxXentForward needs as its workspace for `rows` rows.
size_t softmaxXentWorkspaceBytes(int rows);
// probs (rows, classes) = softmax of logits, as kernels::softmaxXentForward: per row the max
// subtracted, exp summed in double, the loss -(z[label] - max - log(sum)) in double; the
// totals are summed on the device in a fixed order and copied back (waits for them).
// labels are device bytes, each < classes.
XentTotals softmaxXentForward(const float* logits, const uint8_t* labels, float* probs, int rows,
                              int classes, void* workspace);
// dlogits (rows, classes) = (probs - onehot(labels)) * scale.
void softmaxXentBackward(float* dlogits, const float* probs, const uint8_t* labels, int rows,
                         int classes, float scale);

}  // namespace ranklab::cuda
