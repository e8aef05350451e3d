#include "kernels/cpu/conv.h"

#include <cstring>

namespace ranklab::kernels {

namespace {

// Calls visit(tap, input_offset_or_-1) for each (c, ky, kx) tap of output pixel `row`.
template <class Visit>
void forEachTap(const ConvGeometry& g, int64_t row, Visit visit) {
  const int out_h = g.outHeight(), out_w = g.outWidth();
  const int64_t per_image = static_cast<int64_t>(out_h) * out_w;
  const int64_t b = row / per_image;
  const int oy = static_cast<int>(row % per_image) / out_w;
  const int ox = static_cast<int>(row % per_image) % out_w;
  const int k = g.kernel;
  for (int ky = 0; ky < k; ++ky) {
    const int iy = oy + ky - g.padding;
    for (int kx = 0; kx < k; ++kx) {
      const int ix = ox + kx - g.padding;
      const bool inside = iy >= 0 && iy < g.height && ix >= 0 && ix < g.width;
      const int64_t base =
          inside ? ((b * g.height + iy) * g.width + ix) * static_cast<int64_t>(g.channels) : -1;
      visit(ky * k + kx, base);
    }
  }
}

}  // namespace

void im2col(const float* x, const ConvGeometry& g, int64_t first_row, int rows, float* col) {
  const int kk = g.kernel * g.kernel, cols = g.columns();
  for (int r = 0; r < rows; ++r) {
    float* out = col + static_cast<size_t>(r) * cols;
    forEachTap(g, first_row + r, [&](int tap, int64_t base) {
      if (base < 0) {
        for (int c = 0; c < g.channels; ++c) out[c * kk + tap] = 0.f;
      } else {
        const float* in = x + base;
        for (int c = 0; c < g.channels; ++c) out[c * kk + tap] = in[c];
      }
    });
  }
}

void col2imAdd(const float* dcol, const ConvGeometry& g, int64_t first_row, int rows, float* dx) {
  const int kk = g.kernel * g.kernel, cols = g.columns();
  for (int r = 0; r < rows; ++r) {
    const float* in = dcol + static_cast<size_t>(r) * cols;
    forEachTap(g, first_row + r, [&](int tap, int64_t base) {
      if (base < 0) return;
      float* out = dx + base;
      for (int c = 0; c < g.channels; ++c) out[c] += in[c * kk + tap];
    });
  }
}

void maxPool2x2Forward(const float* x, float* y, uint8_t* argmax, int batch, int height, int width,
                       int channels) {
  const int out_h = height / 2, out_w = width / 2;
  const size_t row = static_cast<size_t>(width) * channels;
  for (int b = 0; b < batch; ++b) {
    for (int oy = 0; oy < out_h; ++oy) {
      for (int ox = 0; ox < out_w; ++ox) {
        const float* top =
            x + ((static_cast<size_t>(b) * height + 2 * oy) * width + 2 * ox) * channels;
        const float* taps[4] = {top, top + channels, top + row, top + row + channels};
        const size_t at = ((static_cast<size_t>(b) * out_h + oy) * out_w + ox) * channels;
        for (int c = 0; c < channels; ++c) {
          // First maximum wins on ties, as PyTorch's CPU kernel does (NaN propagates).
          float best = taps[0][c];
          uint8_t which = 0;
          for (uint8_t t = 1; t < 4; ++t) {
            const float v = taps[t][c];
            if (v > best || v != v) {
              best = v;
              which = t;
            }
          }
          y[at + c] = best;
          argmax[at + c] = which;
        }
      }
    }
  }
}

void maxPool2x2Backward(const float* dy, const uint8_t* argmax, float* dx, int batch, int height,
                        int width, int channels) {
  std::memset(dx, 0, sizeof(float) * static_cast<size_t>(batch) * height * width * channels);
  const int out_h = height / 2, out_w = width / 2;
  const size_t row = static_cast<size_t>(width) * channels;
  for (int b = 0; b < batch; ++b) {
    for (int oy = 0; oy < out_h; ++oy) {
      for (int ox = 0; ox < out_w; ++ox) {
        float* top = dx + ((static_cast<size_t>(b) * height + 2 * oy) * width + 2 * ox) * channels;
        const size_t tap_offset[4] = {0, static_cast<size_t>(channels), row, row + channels};
        const size_t at = ((static_cast<size_t>(b) * out_h + oy) * out_w + ox) * channels;
        for (int c = 0; c < channels; ++c) top[tap_offset[argmax[at + c]] + c] = dy[at + c];
      }
    }
  }
}

namespace {
// Each of `batch` (rows, cols) matrices -> its (cols, rows) transpose.
void transposeEach(const float* x, float* y, int batch, size_t rows, size_t cols) {
  for (int b = 0; b < batch; ++b) {
    const float* in = x + b * rows * cols;
    float* out = y + b * rows * cols;
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
    }
  }
}
}  // namespace

void channelsLastToFirst(const float* x, float* y, int batch, int height, int width, int channels) {
  transposeEach(x, y, batch, static_cast<size_t>(height) * width, channels);
}

void channelsFirstToLast(const float* x, float* y, int batch, int height, int width, int channels) {
  transposeEach(x, y, batch, channels, static_cast<size_t>(height) * width);
}

}  // namespace ranklab::kernels
