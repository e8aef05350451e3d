// One way to fail for every CUDA and cuBLAS call: an exception naming the operation and the
// library's own words for the error.
#pragma once

// Stream 0 must mean the calling thread's own default stream in every source that queues CUDA
// work (kernels/CMakeLists.txt defines it for the kernels and for whatever links them).
#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "define CUDA_API_PER_THREAD_DEFAULT_STREAM: ranklab's CUDA work uses per-thread streams"
#endif

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace ranklab::cuda {

inline void check(cudaError_t code, const char* operation) {
  if (code != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA ") + operation + ": " + cudaGetErrorString(code));
  }
}

inline void check(cublasStatus_t code, const char* operation) {
  if (code != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLAS ") + operation + ": " +
                             cublasGetStatusString(code));
  }
}

}  // namespace ranklab::cuda
