// Optimizer update loops over flat fp32 buffers, in PyTorch 1.13's order of operations.
#pragma once

#include <cstddef>

namespace ranklab::kernels {

// g = grad + wd * p;  v = momentum * v + g;  p -= lr * (nesterov ? g + momentum * v : v)
void sgdUpdate(float* params, const float* grads, float* velocity, size_t n, float lr,
               float momentum, float weight_decay, bool nesterov);

// Per-step scalars, computed in double and rounded once, as PyTorch's Python code does.
struct AdamScalars {
  float beta1 = 0.9f, one_minus_beta1 = 0.1f;
  float beta2 = 0.999f, one_minus_beta2 = 0.001f;
  float eps = 1e-8f;
  float step_size = 0;              // lr / (1 - beta1^t)
  float sqrt_bias_correction2 = 1;  // sqrt(1 - beta2^t)
  float l2 = 0;                     // Adam's weight decay, added to the gradient
  float decay_factor = 1;           // AdamW's 1 - lr * weight_decay, applied to p first
};

// p *= decay; g = grad + l2 * p; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
// p -= step_size * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
void adamUpdate(float* params, const float* grads, float* first_moment, float* second_moment,
                size_t n, const AdamScalars& s);

}  // namespace ranklab::kernels
