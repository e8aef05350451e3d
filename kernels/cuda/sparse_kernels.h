// The sparse codecs' work on the GPU, so a gradient in GPU memory leaves it as (index,
// value) pairs instead of n floats: error feedback's add and scatter, DGC's momentum
// correction, and the selections of kernels/cpu/sparse_select.h (the same elements: topk's
// ascending indices with ties at the k-th magnitude to the lowest, magnitudes compared as
// bits; threshold's |x| >= threshold), and randomk's gather. Pointers named `host` are host memory;
// the others device memory. Work is queued on the calling thread's default stream; the selections
// return once their results are in the host vectors (replacing what they held).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ranklab::cuda {

// to += from
void addInto(float* to, const float* from, size_t n);
// velocity = momentum * velocity + grads; grads = velocity
void accumulateMomentum(float* velocity, float* grads, size_t n, float momentum);
// to[host_indices[j]] = host_values[j], j < k
void scatter(float* to, const uint32_t* host_indices, const float* host_values, size_t k);
void selectTopk(const float* x, size_t n, size_t k, std::vector<uint32_t>& host_indices,
                std::vector<float>& host_values);
void selectAtLeast(const float* x, size_t n, float threshold, std::vector<uint32_t>& host_indices,
                   std::vector<float>& host_values);
// host_values[j] = x[host_indices[j]], j < k; returns once they are in host memory.
void gather(const float* x, const uint32_t* host_indices, size_t k, float* host_values);

}  // namespace ranklab::cuda
