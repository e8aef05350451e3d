// Temporary GPU buffers for one call of a codec kernel, allocated and freed on the calling
// thread's own stream (cudaMallocAsync's pool: no device-wide synchronization per call).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>

#include "kernels/cuda/cuda_check.h"

namespace ranklab::cuda {

class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get(size_t bytes) {
    if (count_ == kMax) throw std::logic_error("codec scratch: more than 12 buffers");
    void* p = nullptr;
    check(cudaMallocAsync(&p, bytes > 0 ? bytes : 1, cudaStreamPerThread),
          "allocate codec scratch");
    made_[count_++] = p;
    return p;
  }
  ~Scratch() {
    for (int i = 0; i < count_; ++i) cudaFreeAsync(made_[i], cudaStreamPerThread);
  }

 private:
  static constexpr int kMax = 12;
  void* made_[kMax] = {};
  int count_ = 0;
};

}  // namespace ranklab::cuda
