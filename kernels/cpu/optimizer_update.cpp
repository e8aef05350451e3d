#include "kernels/cpu/optimizer_update.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/vectorize.h"

namespace ranklab::kernels {

namespace {

RANKLAB_VECTORIZED(void, sgdUpdateRange,
                   (float* __restrict params, const float* __restrict grads,
                    float* __restrict velocity, size_t n, float lr, float momentum,
                    float weight_decay, bool nesterov),
                   (params, grads, velocity, n, lr, momentum, weight_decay, nesterov)) {
  if (nesterov) {
    for (size_t i = 0; i < n; ++i) {
      const float g = grads[i] + weight_decay * params[i];
      const float v = momentum * velocity[i] + g;
      velocity[i] = v;
      params[i] -= lr * (g + momentum * v);
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const float g = grads[i] + weight_decay * params[i];
    const float v = momentum * velocity[i] + g;
    velocity[i] = v;
    params[i] -= lr * v;
  }
}

}  // namespace

void sgdUpdate(float* params, const float* grads, float* velocity, size_t n, float lr,
               float momentum, float weight_decay, bool nesterov) {
  // Block by block from the last to the first: the first layer's parameters, which the next
  // forward pass reads first, are written last and are still in cache then. This file is
  // compiled without FMA contraction, so an element rounds alike in the vectorized body and
  // the scalar tail: an update split anywhere (ZeRO, shm-sharded) gives one pass's bits.
  constexpr size_t kBlock = size_t{1} << 14;
  for (size_t block = (n + kBlock - 1) / kBlock; block-- > 0;) {
    const size_t begin = block * kBlock;
    sgdUpdateRange(params + begin, grads + begin, velocity + begin, std::min(kBlock, n - begin), lr,
                   momentum, weight_decay, nesterov);
  }
}

RANKLAB_VECTORIZED(void, adamUpdate,
                   (float* __restrict params, const float* __restrict grads,
                    float* __restrict first_moment, float* __restrict second_moment, size_t n,
                    const AdamScalars& s),
                   (params, grads, first_moment, second_moment, n, s)) {
  for (size_t i = 0; i < n; ++i) {
    const float p = params[i] * s.decay_factor;
    const float g = grads[i] + s.l2 * p;
    const float m = first_moment[i] * s.beta1 + s.one_minus_beta1 * g;
    const float v = second_moment[i] * s.beta2 + s.one_minus_beta2 * g * g;
    first_moment[i] = m;
    second_moment[i] = v;
    params[i] = p - s.step_size * m / (std::sqrt(v) / s.sqrt_bias_correction2 + s.eps);
  }
}

}  // namespace ranklab::kernels
