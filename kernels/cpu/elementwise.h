// Elementwise kernels. Backward functions ADD into their gradient outputs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ranklab::kernels {

// y (B, N) += bias (N) broadcast over rows
void addBiasRows(float* y, const float* bias, int rows, int cols);
// dbias (N) += column sums of dy (B, N)
void sumRowsInto(float* dbias, const float* dy, int rows, int cols);

void reluForward(float* x, size_t n);  // in place
// dx *= (y > 0), where y is the ReLU output
void reluBackward(float* dx, const float* y, size_t n);

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
