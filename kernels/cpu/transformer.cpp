#include "kernels/cpu/transformer.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/fast_math.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/vectorize.h"

namespace ranklab::kernels {

// LayerNorm's rows, each reduction summed in vector lanes (omp simd), the rest elementwise.
RANKLAB_VECTORIZED(void, layerNormForward,
                   (const float* x, const float* weight, const float* bias, float* y, float* mean,
                    float* rstd, size_t rows, int width, float eps),
                   (x, weight, bias, y, mean, rstd, rows, width, eps)) {
  for (size_t r = 0; r < rows; ++r) {
    const float* in = x + r * width;
    float* out = y + r * width;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < width; ++i) sum += in[i];
    const float mu = sum / static_cast<float>(width);
    float squares = 0;
#pragma omp simd reduction(+ : squares)
    for (int i = 0; i < width; ++i) squares += (in[i] - mu) * (in[i] - mu);
    const float inv = 1.f / std::sqrt(squares / static_cast<float>(width) + eps);
    for (int i = 0; i < width; ++i) out[i] = (in[i] - mu) * inv * weight[i] + bias[i];
    mean[r] = mu;
    rstd[r] = inv;
  }
}

RANKLAB_VECTORIZED(void, layerNormBackward,
                   (const float* x, const float* weight, const float* mean, const float* rstd,
                    const float* dy, float* dx, float* dweight, float* dbias, size_t rows,
                    int width, bool accumulate),
                   (x, weight, mean, rstd, dy, dx, dweight, dbias, rows, width, accumulate)) {
  if (!accumulate) {
    for (int i = 0; i < width; ++i) dweight[i] = dbias[i] = 0.f;
  }
  for (size_t r = 0; r < rows; ++r) {
    const float* in = x + r * width;
    const float* grad = dy + r * width;
    const float mu = mean[r], inv = rstd[r];
    // dxhat = dy * weight; dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
    float dxhat_sum = 0, dxhat_xhat_sum = 0;
#pragma omp simd reduction(+ : dxhat_sum, dxhat_xhat_sum)
    for (int i = 0; i < width; ++i) {
      const float xhat = (in[i] - mu) * inv;
      dxhat_sum += grad[i] * weight[i];
      dxhat_xhat_sum += grad[i] * weight[i] * xhat;
    }
    for (int i = 0; i < width; ++i) {
      dweight[i] += grad[i] * (in[i] - mu) * inv;
      dbias[i] += grad[i];
    }
    if (!dx) continue;
    const float a = dxhat_sum / static_cast<float>(width);
    const float b = dxhat_xhat_sum / static_cast<float>(width);
    float* out = dx + r * width;
    for (int i = 0; i < width; ++i)
      out[i] = inv * (grad[i] * weight[i] - a - (in[i] - mu) * inv * b);
  }
}

// Phi(x), one expression for both of geluForward's loops (evaluation's and training's).
[[gnu::always_inline]] inline float normalCdf(float x) {
  return 0.5f * (1.f + erfApprox(x * float(M_SQRT1_2)));
}

RANKLAB_VECTORIZED(void, geluForward, (const float* x, float* y, float* slope, size_t n),
                   (x, y, slope, n)) {
  const float inv_sqrt_2pi = 0.5f * float(M_2_SQRTPI) * float(M_SQRT1_2);  // 1 / sqrt(2 pi)
  if (!slope) {
    for (size_t i = 0; i < n; ++i) y[i] = x[i] * normalCdf(x[i]);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const float cdf = normalCdf(x[i]);
    y[i] = x[i] * cdf;
    slope[i] = cdf + x[i] * inv_sqrt_2pi * expApprox(-0.5f * x[i] * x[i]);
  }
}

void geluBackward(const float* slope, const float* dy, float* dx, size_t n) {
  for (size_t i = 0; i < n; ++i) dx[i] = dy[i] * slope[i];
}

namespace {

// Row t of a (length, length) score matrix to the softmax of its first t + 1 entries; the
// rest (the future) to 0. The exponentials in one vectorized pass, then their sum.
RANKLAB_VECTORIZED(void, causalSoftmaxRows, (float* scores, int length), (scores, length)) {
  for (int t = 0; t < length; ++t) {
    float* row = scores + static_cast<size_t>(t) * length;
    float top = row[0];
    for (int s = 1; s <= t; ++s) top = std::max(top, row[s]);
    for (int s = 0; s <= t; ++s) row[s] = expApprox(row[s] - top);
    float sum = 0;
    for (int s = 0; s <= t; ++s) sum += row[s];
    const float inv = 1.f / sum;
    for (int s = 0; s <= t; ++s) row[s] *= inv;
    for (int s = t + 1; s < length; ++s) row[s] = 0.f;
  }
}

}  // namespace

void causalAttentionForward(const float* qkv, float* y, float* probs, int batch, int length,
                            int width, int heads) {
  const int d = width / heads;
  const int row = 3 * width;
  const float scale = 1.f / std::sqrt(static_cast<float>(d));
  const size_t square = static_cast<size_t>(length) * length;
  for (int b = 0; b < batch; ++b) {
    const float* seq = qkv + static_cast<size_t>(b) * length * row;
    for (int h = 0; h < heads; ++h) {
      const float* q = seq + h * d;
      const float* k = seq + width + h * d;
      const float* v = seq + 2 * width + h * d;
      float* p = probs + (static_cast<size_t>(b) * heads + h) * square;
      // p = q k^T / sqrt(d), then the causal softmax; y_h = p v.
      sgemm(Trans::kNo, Trans::kYes, length, length, d, scale, q, row, k, row, 0.f, p, length);
      causalSoftmaxRows(p, length);
      sgemm(Trans::kNo, Trans::kNo, length, d, length, 1.f, p, length, v, row, 0.f,
            y + static_cast<size_t>(b) * length * width + h * d, width);
    }
  }
}

void causalAttentionBackward(const float* qkv, const float* probs, const float* dy, float* dqkv,
                             int batch, int length, int width, int heads) {
  const int d = width / heads;
  const int row = 3 * width;
  const float scale = 1.f / std::sqrt(static_cast<float>(d));
  const size_t square = static_cast<size_t>(length) * length;
  std::vector<float> dp(square);
  for (int b = 0; b < batch; ++b) {
    const size_t seq_offset = static_cast<size_t>(b) * length * row;
    const float* seq = qkv + seq_offset;
    float* dseq = dqkv + seq_offset;
    const float* dyb = dy + static_cast<size_t>(b) * length * width;
    for (int h = 0; h < heads; ++h) {
      const float* q = seq + h * d;
      const float* k = seq + width + h * d;
      const float* v = seq + 2 * width + h * d;
      const float* p = probs + (static_cast<size_t>(b) * heads + h) * square;
      // dp = dy_h v^T; dv = p^T dy_h
      sgemm(Trans::kNo, Trans::kYes, length, length, d, 1.f, dyb + h * d, width, v, row, 0.f,
            dp.data(), length);
      sgemm(Trans::kYes, Trans::kNo, length, d, length, 1.f, p, length, dyb + h * d, width, 0.f,
            dseq + 2 * width + h * d, row);
      // ds = p * (dp - rowsum(p * dp)), the softmax's backward (0 where p is: the future)
      for (int t = 0; t < length; ++t) {
        const float* pr = p + static_cast<size_t>(t) * length;
        float* dr = dp.data() + static_cast<size_t>(t) * length;
        float dot = 0;
        for (int s = 0; s <= t; ++s) dot += pr[s] * dr[s];
        for (int s = 0; s < length; ++s) dr[s] = s <= t ? pr[s] * (dr[s] - dot) : 0.f;
      }
      // dq = ds k / sqrt(d); dk = ds^T q / sqrt(d)
      sgemm(Trans::kNo, Trans::kNo, length, d, length, scale, dp.data(), length, k, row, 0.f,
            dseq + h * d, row);
      sgemm(Trans::kYes, Trans::kNo, length, d, length, scale, dp.data(), length, q, row, 0.f,
            dseq + width + h * d, row);
    }
  }
}

namespace {

int tokenAt(const float* tokens, size_t index, int vocab) {
  const float value = tokens[index];
  if (!(value >= 0.f && value < static_cast<float>(vocab)) || value != std::floor(value)) {
    throw std::out_of_range("embedding: token " + std::to_string(value) + " at position " +
                            std::to_string(index) + " is not an id in [0, " +
                            std::to_string(vocab) + ")");
  }
  return static_cast<int>(value);
}

}  // namespace

void embeddingForward(const float* tokens, const float* token_table, const float* position_table,
                      float* y, int batch, int length, int width, int vocab) {
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < length; ++t) {
      const size_t index = static_cast<size_t>(b) * length + t;
      const float* token = token_table + static_cast<size_t>(tokenAt(tokens, index, vocab)) * width;
      const float* position = position_table + static_cast<size_t>(t) * width;
      float* out = y + index * width;
      for (int i = 0; i < width; ++i) out[i] = token[i] + position[i];
    }
  }
}

void embeddingBackward(const float* tokens, const float* dy, float* dtoken_table,
                       float* dposition_table, int batch, int length, int width,
                       bool accumulate_positions) {
  if (!accumulate_positions) {
    for (size_t i = 0; i < static_cast<size_t>(length) * width; ++i) dposition_table[i] = 0.f;
  }
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < length; ++t) {
      const size_t index = static_cast<size_t>(b) * length + t;
      const float* grad = dy + index * width;
      float* token = dtoken_table + static_cast<size_t>(tokens[index]) * width;
      float* position = dposition_table + static_cast<size_t>(t) * width;
      for (int i = 0; i < width; ++i) {
        token[i] += grad[i];
        position[i] += grad[i];
      }
    }
  }
}

}  // namespace ranklab::kernels
