// The CUDA twins of the engine's loops over flat buffers: the optimizer updates of
// kernels/cpu/optimizer_update.h, AMP's unscale and overflow check, fills and copies.
// Pointers are device pointers; work is queued on the calling thread's own default stream
// (per-thread: another thread's work is not ordered with it), and the synchronous copies wait
// for that stream alone.
#pragma once

#include <cstddef>
#include <memory>

#include "kernels/cpu/optimizer_update.h"

namespace ranklab::cuda {

void sgdUpdate(float* params, const float* grads, float* velocity, size_t n, float lr,
               float momentum, float weight_decay, bool nesterov);
void adamUpdate(float* params, const float* grads, float* first_moment, float* second_moment,
                size_t n, const kernels::AdamScalars& s);
// x *= factor; false when any value is then inf or NaN. Waits for the verdict.
bool scaleAndCheckFinite(float* x, size_t n, float factor);
// The sum of x[i]^2, in double (a gradient's squared norm). Waits for it.
double sumOfSquares(const float* x, size_t n);
void fill(float* x, size_t n, float value);
void copyDevice(float* to, const float* from, size_t n);
void upload(float* to, const float* host, size_t n);
// Queued on the calling thread's own stream; `bytes` of host memory copied as they are
// when the copy runs (see cudaMemcpyAsync).
void uploadAsync(void* to, const void* host, size_t bytes);
// cudaHostRegister: page-locked while the result lives.
std::shared_ptr<void> pinHost(void* host, size_t bytes);
void download(float* host, const float* from, size_t n);

}  // namespace ranklab::cuda
