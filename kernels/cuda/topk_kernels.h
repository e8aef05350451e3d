// The topk codec's work on the GPU, so a gradient in GPU memory leaves it as k (index,
// value) pairs instead of n floats: error feedback's add and scatter, DGC's momentum
// correction, and the selection of
// kernels/cpu/topk_select.h (the same elements: ascending indices, ties at the k-th
// magnitude to the lowest indices, magnitudes compared as bits). Pointers named `host` are
// host memory; the others device memory. Work is queued on the calling thread's default
// stream; selectTopk returns once its results are in host memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ranklab::cuda {

// to += from
void addInto(float* to, const float* from, size_t n);
// velocity = momentum * velocity + grads; grads = velocity
void accumulateMomentum(float* velocity, float* grads, size_t n, float momentum);
// to[host_indices[j]] = host_values[j], j < k
void scatter(float* to, const uint32_t* host_indices, const float* host_values, size_t k);
void selectTopk(const float* x, size_t n, size_t k, uint32_t* host_indices, float* host_values);

}  // namespace ranklab::cuda
