#include "kernels/cpu/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/vectorize.h"

namespace ranklab::kernels {

RANKLAB_VECTORIZED(void, addBiasRows, (float* y, const float* bias, int rows, int cols),
                   (y, bias, rows, cols)) {
  for (int r = 0; r < rows; ++r) {
    float* row = y + static_cast<size_t>(r) * cols;
    for (int c = 0; c < cols; ++c) row[c] += bias[c];
  }
}

void copyBiasRows(float* y, const float* bias, int rows, int cols) {
  const size_t row_bytes = static_cast<size_t>(cols) * sizeof(float);
  for (int r = 0; r < rows; ++r) std::memcpy(y + static_cast<size_t>(r) * cols, bias, row_bytes);
}

RANKLAB_VECTORIZED(void, sumRowsInto, (float* dbias, const float* dy, int rows, int cols),
                   (dbias, dy, rows, cols)) {
  for (int r = 0; r < rows; ++r) {
    const float* row = dy + static_cast<size_t>(r) * cols;
    for (int c = 0; c < cols; ++c) dbias[c] += row[c];
  }
}

RANKLAB_VECTORIZED(void, reluBackwardSumRows,
                   (const float* __restrict dy, const float* __restrict y, float* __restrict dz,
                    float* __restrict dbias, int rows, int cols),
                   (dy, y, dz, dbias, rows, cols)) {
  for (int r = 0; r < rows; ++r) {
    const size_t row = static_cast<size_t>(r) * cols;
    for (int c = 0; c < cols; ++c) {
      const float g = y[row + c] > 0.f ? dy[row + c] : 0.f;
      dz[row + c] = g;
      dbias[c] += g;
    }
  }
}

RANKLAB_VECTORIZED(void, reluForward, (const float* x, float* y, size_t n), (x, y, n)) {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

RANKLAB_VECTORIZED(void, reluBackward, (const float* dy, const float* y, float* dx, size_t n),
                   (dy, y, dx, n)) {
  for (size_t i = 0; i < n; ++i) {
    const float g = dy[i];  // loaded unconditionally, so the select vectorizes (no branch)
    dx[i] = y[i] > 0.f ? g : 0.f;
  }
}

RANKLAB_VECTORIZED(void, addInto, (float* __restrict y, const float* __restrict x, size_t n),
                   (y, x, n)) {
  for (size_t i = 0; i < n; ++i) y[i] += x[i];
}

namespace {
// SplitMix64's finalizer: a well-mixed 64-bit hash of a counter.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
}  // namespace

void dropoutMask(uint64_t key, float p, float* scale, size_t n) {
  const float keep_scale = 1.f / (1.f - p);
  // Compare 24-bit uniforms against p in the same units, so p is honoured exactly.
  const uint32_t threshold = static_cast<uint32_t>(static_cast<double>(p) * (1u << 24));
  const uint64_t base = mix64(key);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(mix64(base + 0x9e3779b97f4a7c15ULL * (i + 1)) >> 40);
    scale[i] = u < threshold ? 0.f : keep_scale;
  }
}

RANKLAB_VECTORIZED(void, multiply, (const float* a, const float* b, float* out, size_t n),
                   (a, b, out, n)) {
  for (size_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
}

XentResult softmaxXentForward(const float* logits, const uint8_t* labels, float* probs, int rows,
                              int classes) {
  XentResult result;
  for (int r = 0; r < rows; ++r) {
    const float* z = logits + static_cast<size_t>(r) * classes;
    float* p = probs + static_cast<size_t>(r) * classes;
    const int best = static_cast<int>(std::max_element(z, z + classes) - z);
    const float zmax = z[best];  // subtract the max so exp never overflows
    double sum = 0;
    for (int c = 0; c < classes; ++c) {
      p[c] = std::exp(z[c] - zmax);
      sum += p[c];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int c = 0; c < classes; ++c) p[c] *= inv;
    result.loss_sum += -(static_cast<double>(z[labels[r]] - zmax) - std::log(sum));
    result.correct += best == labels[r] ? 1 : 0;
  }
  return result;
}

void softmaxXentBackward(float* dlogits, const float* probs, const uint8_t* labels, int rows,
                         int classes, float scale) {
  for (int r = 0; r < rows; ++r) {
    const float* p = probs + static_cast<size_t>(r) * classes;
    float* d = dlogits + static_cast<size_t>(r) * classes;
    for (int c = 0; c < classes; ++c) d[c] = p[c] * scale;
    d[labels[r]] -= scale;
  }
}

}  // namespace ranklab::kernels
