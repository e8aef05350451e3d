// Image kernels for convolution and pooling. Images are channels-last, (B, H, W, C), so
// that a convolution over a whole batch is one tall GEMM. im2col columns are ordered
// (C, kh, kw), which is PyTorch's Conv2d weight layout (Cout, Cin, kh, kw) flattened.
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

// col (rows, C*k*k) = the receptive fields of output pixels first_row .. first_row+rows-1,
// numbered over the batch as (b, oy, ox); x (B, H, W, C). Out-of-image taps are 0.
void im2col(const float* x, const ConvGeometry& g, int64_t first_row, int rows, float* col);
// dx (B, H, W, C) += the receptive-field gradients dcol (rows, C*k*k), the adjoint of im2col.
void col2imAdd(const float* dcol, const ConvGeometry& g, int64_t first_row, int rows, float* dx);

// 2x2 max pooling, stride 2, floor mode: x (B, H, W, C) -> y (B, H/2, W/2, C). argmax holds
// which of the four taps (0..3, row-major) won, for backward.
void maxPool2x2Forward(const float* x, float* y, uint8_t* argmax, int batch, int height, int width,
                       int channels);
// dx (B, H, W, C) = dy routed to the winning taps, 0 elsewhere (written, not added).
void maxPool2x2Backward(const float* dy, const uint8_t* argmax, float* dx, int batch, int height,
                        int width, int channels);

// (B, H, W, C) -> (B, C, H, W): flattening in PyTorch's order for a following Linear.
void channelsLastToFirst(const float* x, float* y, int batch, int height, int width, int channels);
// (B, C, H, W) -> (B, H, W, C), the inverse (used for gradients).
void channelsFirstToLast(const float* x, float* y, int batch, int height, int width, int channels);

}  // namespace ranklab::kernels
