// The CUDA twins of kernels/cpu: row-major SGEMM through cuBLAS and elementwise kernels.
// Pointers are device pointers; work is queued on the calling thread's own default stream
// (per-thread, not the legacy one). Built only when nvcc is found (RANKLAB_HAVE_CUDA).
#pragma once

#include <cstddef>

#include "kernels/cpu/gemm.h"

namespace ranklab::cuda {

// Owns device memory for `count` floats; copies to and from the host.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t count);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  float* data() { return data_; }
  size_t size() const { return count_; }
  void upload(const float* host);
  void download(float* host) const;

 private:
  float* data_ = nullptr;
  size_t count_ = 0;
};

// C (M, N) = alpha * op(A) * op(B) + beta * C, row-major like kernels::sgemm. tf32: the
// products on TF32 tensor cores (inputs rounded to a 10-bit mantissa, sums in fp32).
void sgemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k, float alpha,
           const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc,
           bool tf32 = false);
void reluForward(float* x, size_t n);
void reluBackward(float* dx, const float* y, size_t n);
void addBiasRows(float* y, const float* bias, int rows, int cols);
// Returns once the calling thread's queued work is done (other threads' may still run).
void synchronize();

}  // namespace ranklab::cuda
