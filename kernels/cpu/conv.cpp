#include "kernels/cpu/conv.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/skinny_gemm.h"
#include "kernels/cpu/vectorize.h"

namespace ranklab::kernels {

namespace {

// Calls visit(r, offset) for each output pixel first_row + r (numbered (b, oy, ox) over the
// batch) with the padded-input index of its receptive field's top-left tap, channel 0.
template <class Visit>
void forEachReceptiveField(const ConvGeometry& g, int64_t first_row, int rows, Visit visit) {
  const int out_h = g.outHeight(), out_w = g.outWidth();
  const int64_t padded_w = g.width + 2 * g.padding, padded_h = g.height + 2 * g.padding;
  const int64_t per_image = static_cast<int64_t>(out_h) * out_w;
  int64_t b = first_row / per_image;
  int oy = static_cast<int>(first_row % per_image) / out_w;
  int ox = static_cast<int>(first_row % per_image) % out_w;
  for (int r = 0; r < rows; ++r) {
    visit(r, ((b * padded_h + oy) * padded_w + ox) * g.channels);
    if (++ox == out_w) {  // next pixel, without a division per pixel
      ox = 0;
      if (++oy == out_h) {
        oy = 0;
        ++b;
      }
    }
  }
}

}  // namespace

void padImage(const float* x, float* padded, int batch, const ConvGeometry& g) {
  const size_t c = g.channels, p = g.padding, w = g.width;
  const size_t padded_row = (w + 2 * p) * c, row = w * c;
  float* out = padded;
  for (int b = 0; b < batch; ++b) {
    std::memset(out, 0, p * padded_row * sizeof(float));  // top border
    out += p * padded_row;
    for (int y = 0; y < g.height; ++y, out += padded_row, x += row) {
      std::memset(out, 0, p * c * sizeof(float));
      std::memcpy(out + p * c, x, row * sizeof(float));
      std::memset(out + p * c + row, 0, p * c * sizeof(float));
    }
    std::memset(out, 0, p * padded_row * sizeof(float));  // bottom border
    out += p * padded_row;
  }
}

void cropImage(const float* padded, float* dx, int batch, const ConvGeometry& g) {
  const size_t c = g.channels, p = g.padding, w = g.width;
  const size_t padded_row = (w + 2 * p) * c, row = w * c;
  for (int b = 0; b < batch; ++b) {
    const float* in = padded + (static_cast<size_t>(b) * (g.height + 2 * p) + p) * padded_row;
    for (int y = 0; y < g.height; ++y, in += padded_row, dx += row) {
      std::memcpy(dx, in + p * c, row * sizeof(float));
    }
  }
}

void im2col(const float* xp, const ConvGeometry& g, int64_t first_row, int rows, float* col) {
  const size_t cols = g.columns(), run = static_cast<size_t>(g.kernel) * g.channels;
  const size_t padded_row = static_cast<size_t>(g.width + 2 * g.padding) * g.channels;
  forEachReceptiveField(g, first_row, rows, [&](int r, int64_t offset) {
    float* out = col + r * cols;
    const float* in = xp + offset;
    for (int ky = 0; ky < g.kernel; ++ky, out += run, in += padded_row) {
      // A kernel row is one contiguous run of the padded image. Short runs (few channels)
      // are copied inline: a libc call would cost more than the copy.
      if (run < 32) {
        for (size_t i = 0; i < run; ++i) out[i] = in[i];
      } else {
        std::memcpy(out, in, run * sizeof(float));
      }
    }
  });
}

namespace {

// The receptive fields of output pixels first_row.. as the rows of the im2col matrix, in
// place in the padded image (pointers in a per-thread buffer).
skinny::ARows receptiveFieldRows(const float* xp, const ConvGeometry& g, int64_t first_row,
                                 int rows) {
  thread_local std::vector<const float*> pointers;
  pointers.resize(rows);
  forEachReceptiveField(g, first_row, rows,
                        [&](int r, int64_t offset) { pointers[r] = xp + offset; });
  const int run = g.kernel * g.channels;
  return {pointers.data(), g.kernel, run, static_cast<long>(g.width + 2 * g.padding) * g.channels};
}

}  // namespace

bool inPlaceConvGemm(int rows, int out_channels, int columns) {
  return sgemmKernel(Trans::kNo, Trans::kNo, rows, out_channels, columns) == GemmKernel::kSkinny;
}

void convForwardInPlace(const float* xp, const ConvGeometry& g, int64_t first_row, int rows,
                        const float* wt, int out_channels, float* y) {
  skinny::gemmRowsNN(receptiveFieldRows(xp, g, first_row, rows), rows, out_channels, 1.f, wt,
                     out_channels, 0.f, y, out_channels);
}

void convWeightGradInPlace(const float* xp, const ConvGeometry& g, int64_t first_row, int rows,
                           const float* dy, int out_channels, float beta, float* dwt) {
  skinny::gemmRowsTN(receptiveFieldRows(xp, g, first_row, rows), g.columns(), out_channels, rows,
                     1.f, dy, out_channels, beta, dwt, out_channels);
}

void col2imAdd(const float* dcol, const ConvGeometry& g, int64_t first_row, int rows, float* dxp) {
  const size_t cols = g.columns(), run = static_cast<size_t>(g.kernel) * g.channels;
  const size_t padded_row = static_cast<size_t>(g.width + 2 * g.padding) * g.channels;
  forEachReceptiveField(g, first_row, rows, [&](int r, int64_t offset) {
    const float* in = dcol + r * cols;
    float* out = dxp + offset;
    for (int ky = 0; ky < g.kernel; ++ky, in += run, out += padded_row) addInto(out, in, run);
  });
}

RANKLAB_VECTORIZED(void, maxPool2x2Forward,
                   (const float* x, float* y, uint8_t* argmax, int batch, int height, int width,
                    int channels),
                   (x, y, argmax, batch, height, width, channels)) {
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

RANKLAB_VECTORIZED(void, maxPool2x2Backward,
                   (const float* dy, const uint8_t* argmax, float* dx, int batch, int height,
                    int width, int channels),
                   (dy, argmax, dx, batch, height, width, channels)) {
  const int out_h = height / 2, out_w = width / 2;
  const size_t row = static_cast<size_t>(width) * channels;
  // Floor mode leaves an odd last row or column out of every window: its gradient is 0.
  if (height % 2 != 0 || width % 2 != 0) {
    std::memset(dx, 0, sizeof(float) * static_cast<size_t>(batch) * height * row);
  }
  for (int b = 0; b < batch; ++b) {
    for (int oy = 0; oy < out_h; ++oy) {
      for (int ox = 0; ox < out_w; ++ox) {
        float* top = dx + ((static_cast<size_t>(b) * height + 2 * oy) * width + 2 * ox) * channels;
        float* taps[4] = {top, top + channels, top + row, top + row + channels};
        const size_t at = ((static_cast<size_t>(b) * out_h + oy) * out_w + ox) * channels;
        // Every tap of the window is written once: the winner gets dy, the others 0.
        for (int t = 0; t < 4; ++t) {
          for (int c = 0; c < channels; ++c) {
            const float g = dy[at + c];
            taps[t][c] = argmax[at + c] == t ? g : 0.f;
          }
        }
      }
    }
  }
}

void transposeEach(const float* x, float* y, int batch, size_t rows, size_t cols) {
  for (int b = 0; b < batch; ++b) {
    const float* in = x + b * rows * cols;
    float* out = y + b * rows * cols;
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
    }
  }
}

void channelsLastToFirst(const float* x, float* y, int batch, int height, int width, int channels) {
  transposeEach(x, y, batch, static_cast<size_t>(height) * width, channels);
}

void channelsFirstToLast(const float* x, float* y, int batch, int height, int width, int channels) {
  transposeEach(x, y, batch, channels, static_cast<size_t>(height) * width);
}

void packConvWeight(const float* w, float* packed, int out_channels, int channels, int taps) {
  for (int o = 0; o < out_channels; ++o) {
    const float* in = w + static_cast<size_t>(o) * channels * taps;
    float* out = packed + static_cast<size_t>(o) * channels * taps;
    for (int c = 0; c < channels; ++c) {
      for (int t = 0; t < taps; ++t) out[t * channels + c] = in[c * taps + t];
    }
  }
}

void unpackConvWeightGradAdd(const float* grad_t, float* grad, int out_channels, int channels,
                             int taps) {
  for (int o = 0; o < out_channels; ++o) {
    float* out = grad + static_cast<size_t>(o) * channels * taps;
    for (int c = 0; c < channels; ++c) {
      for (int t = 0; t < taps; ++t) {
        out[c * taps + t] += grad_t[(static_cast<size_t>(t) * channels + c) * out_channels + o];
      }
    }
  }
}

}  // namespace ranklab::kernels
