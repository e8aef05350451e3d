// Image kernels for convolution and pooling. Images are channels-last, (B, H, W, C), so
// that a convolution over a whole batch is one tall GEMM. im2col columns are ordered
// (kh, kw, C): one kernel row of a receptive field is then one contiguous run of the
// image, copied whole. A weight in that order is (Cout, kh, kw, Cin); PyTorch's
// (Cout, Cin, kh, kw) is converted by the two functions at the end.
// Backward functions ADD into their gradient outputs unless said otherwise.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ranklab::kernels {

// A stride-1 convolution's geometry over (B, H, W, C) input.
struct ConvGeometry {
  int height = 0, width = 0, channels = 0;  // input
  int kernel = 1;                           // square kernel
  int padding = 0;                          // zeros on every side
  int outHeight() const { return height + 2 * padding - kernel + 1; }
  int outWidth() const { return width + 2 * padding - kernel + 1; }
  int columns() const { return channels * kernel * kernel; }  // K of the GEMM
};

// The convolution's input with its zero border: x (B, H, W, C) -> padded (B, H+2p, W+2p, C).
// On a padded image every receptive field lies inside, so im2col needs no edge cases.
void padImage(const float* x, float* padded, int batch, const ConvGeometry& g);
// dx (B, H, W, C) = the interior of padded (B, H+2p, W+2p, C), written, not added.
void cropImage(const float* padded, float* dx, int batch, const ConvGeometry& g);

// col (rows, k*k*C) = the receptive fields of output pixels first_row .. first_row+rows-1,
// numbered over the batch as (b, oy, ox), from the padded input xp (B, H+2p, W+2p, C).
void im2col(const float* xp, const ConvGeometry& g, int64_t first_row, int rows, float* col);
// dxp (B, H+2p, W+2p, C) += the receptive-field gradients dcol (rows, k*k*C): im2col's adjoint.
void col2imAdd(const float* dcol, const ConvGeometry& g, int64_t first_row, int rows, float* dxp);

// The same product as im2col + GEMM, with the im2col matrix read in place from the padded
// image instead of formed: for fp32 on one BLAS thread and at most 64 output channels
// (inPlaceConvGemm says when: sgemm() would give the product of `rows` output pixels, K =
// `columns`, to the skinny kernels), where it saves writing and re-reading every receptive
// field.
bool inPlaceConvGemm(int rows, int out_channels, int columns);
// y (rows, Cout) = im2col(xp) (rows, K) . wt (K, Cout), output pixels first_row.. .
void convForwardInPlace(const float* xp, const ConvGeometry& g, int64_t first_row, int rows,
                        const float* wt, int out_channels, float* y);
// dwt (K, Cout) = im2col(xp)^T (K, rows) . dy (rows, Cout) + beta * dwt.
void convWeightGradInPlace(const float* xp, const ConvGeometry& g, int64_t first_row, int rows,
                           const float* dy, int out_channels, float beta, float* dwt);

// 2x2 max pooling, stride 2, floor mode: x (B, H, W, C) -> y (B, H/2, W/2, C). argmax holds
// which of the four taps (0..3, row-major) won, for backward.
void maxPool2x2Forward(const float* x, float* y, uint8_t* argmax, int batch, int height, int width,
                       int channels);
// dx (B, H, W, C) = dy routed to the winning taps, 0 elsewhere (written, not added).
void maxPool2x2Backward(const float* dy, const uint8_t* argmax, float* dx, int batch, int height,
                        int width, int channels);

// Each of `batch` (rows, cols) matrices -> its (cols, rows) transpose.
void transposeEach(const float* x, float* y, int batch, size_t rows, size_t cols);

// (B, H, W, C) -> (B, C, H, W): flattening in PyTorch's order for a following Linear.
void channelsLastToFirst(const float* x, float* y, int batch, int height, int width, int channels);
// (B, C, H, W) -> (B, H, W, C), the inverse (used for gradients).
void channelsFirstToLast(const float* x, float* y, int batch, int height, int width, int channels);

// w (Cout, C, k*k) -> packed (Cout, k*k, C), the weight in im2col's column order.
void packConvWeight(const float* w, float* packed, int out_channels, int channels, int taps);
// grad (Cout, C, k*k) += grad_t (k*k, C, Cout): a weight gradient computed as
// columns^T . dy, in PyTorch's layout.
void unpackConvWeightGradAdd(const float* grad_t, float* grad, int out_channels, int channels,
                             int taps);

}  // namespace ranklab::kernels
