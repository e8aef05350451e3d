#include "kernels/cpu/elementwise.h"

#include <algorithm>
#include <cmath>

namespace ranklab::kernels {

void addBiasRows(float* y, const float* bias, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    float* row = y + static_cast<size_t>(r) * cols;
    for (int c = 0; c < cols; ++c) row[c] += bias[c];
  }
}

void sumRowsInto(float* dbias, const float* dy, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float* row = dy + static_cast<size_t>(r) * cols;
    for (int c = 0; c < cols; ++c) dbias[c] += row[c];
  }
}

void reluForward(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.f ? x[i] : 0.f;
}

void reluBackward(float* dx, const float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) dx[i] = y[i] > 0.f ? dx[i] : 0.f;
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
