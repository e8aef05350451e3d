// Elementwise kernels. Backward functions ADD into their gradient outputs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ranklab::kernels {

// y (B, N) += bias (N) broadcast over rows
void addBiasRows(float* y, const float* bias, int rows, int cols);
// y (B, N) = bias (N) in every row
void copyBiasRows(float* y, const float* bias, int rows, int cols);
// dbias (N) += column sums of dy (B, N)
void sumRowsInto(float* dbias, const float* dy, int rows, int cols);

// A ReLU's backward and the bias gradient of the layer before it in one pass over dy:
// dz (B, N) = dy * (y > 0), y being the ReLU's output; dbias (N) += column sums of dz.
void reluBackwardSumRows(const float* dy, const float* y, float* dz, float* dbias, int rows,
                         int cols);

// y = max(x, 0); y may be x
void reluForward(const float* x, float* y, size_t n);
// dx = dy * (y > 0), where y is the ReLU output (written, not added; dx may be dy)
void reluBackward(const float* dy, const float* y, float* dx, size_t n);

// Inverted dropout: scale[i] = 0 with probability p, else 1 / (1 - p). Each draw is a hash
// of (key, i), so a mask depends only on its key and never on what was drawn before.
void dropoutMask(uint64_t key, float p, float* scale, size_t n);
// y (n) += x (n)
void addInto(float* y, const float* x, size_t n);
// out = a * b elementwise; out may alias a or b
void multiply(const float* a, const float* b, float* out, size_t n);

// Softmax cross-entropy over logits (B, C) with integer labels. Writes probabilities
// into probs, returns the summed loss (not the mean) and the number of correct argmaxes.
struct XentResult {
  double loss_sum = 0;
  int64_t correct = 0;
};
XentResult softmaxXentForward(const float* logits, const uint8_t* labels, float* probs, int rows,
                              int classes);
// dlogits (B, C) = (probs - onehot(labels)) * scale
void softmaxXentBackward(float* dlogits, const float* probs, const uint8_t* labels, int rows,
                         int classes, float scale);

}  // namespace ranklab::kernels
