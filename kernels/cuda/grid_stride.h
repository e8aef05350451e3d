// Launch shapes for ranklab's kernels over n elements (included by the .cu sources alone):
// kThreads a block and at most kMaxBlocks blocks, each thread stepping by the whole grid, so
// any size_t count launches correctly with no grid too large and no int in between.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace ranklab::cuda {

constexpr int kThreads = 256;
// Enough blocks to fill any GPU; the grid-stride loops cover the rest.
constexpr size_t kMaxBlocks = 65535;

// At least one block: a launch over no elements is valid, and does nothing.
inline unsigned blocksFor(size_t n) {
  const size_t wanted = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(wanted < 1 ? 1 : wanted < kMaxBlocks ? wanted : kMaxBlocks);
}

// for (size_t i = firstIndex(); i < n; i += gridStride())
__device__ inline size_t firstIndex() {
  return blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
}

__device__ inline size_t gridStride() {
  return static_cast<size_t>(gridDim.x) * blockDim.x;
}

}  // namespace ranklab::cuda
