#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/cublas_handle.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/grid_stride.h"

namespace ranklab::cuda {

namespace {

__global__ void reluForwardKernel(float* x, size_t n) {
  for (size_t i = firstIndex(); i < n; i += gridStride()) x[i] = x[i] > 0.f ? x[i] : 0.f;
}

__global__ void reluBackwardKernel(float* dx, const float* y, size_t n) {
  for (size_t i = firstIndex(); i < n; i += gridStride())
    if (y[i] <= 0.f) dx[i] = 0.f;
}

__global__ void addBiasRowsKernel(float* y, const float* bias, size_t rows, int cols) {
  const size_t n = rows * cols;
  for (size_t i = firstIndex(); i < n; i += gridStride()) y[i] += bias[i % cols];
}

}  // namespace

DeviceBuffer::DeviceBuffer(size_t count) : count_(count) {
  if (count > 0) check(cudaMalloc(&data_, count * sizeof(float)), "malloc");
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

void DeviceBuffer::upload(const float* host) {
  check(cudaMemcpy(data_, host, count_ * sizeof(float), cudaMemcpyHostToDevice), "upload");
}

void DeviceBuffer::download(float* host) const {
  check(cudaMemcpy(host, data_, count_ * sizeof(float), cudaMemcpyDeviceToHost), "download");
}

cublasHandle_t cublasHandle() {
  int device = 0;
  check(cudaGetDevice(&device), "get current device");
  // Never destroyed: they live as long as the thread, and destroying them at exit could run
  // after the CUDA runtime is gone.
  thread_local std::vector<cublasHandle_t> handles;
  if (static_cast<size_t>(device) >= handles.size()) handles.resize(device + 1, nullptr);
  if (handles[device] == nullptr) {
    cublasHandle_t made = nullptr;
    check(cublasCreate(&made), "create handle");
    check(cublasSetMathMode(made, CUBLAS_DEFAULT_MATH), "set math mode");
    // cuBLAS is compiled apart: its stream 0 is the legacy stream, not this thread's own.
    check(cublasSetStream(made, cudaStreamPerThread), "set stream");
    handles[device] = made;
  }
  return handles[device];
}

void sgemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k, float alpha,
           const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc,
           bool tf32) {
  if (m == 0 || n == 0) return;
  // Row-major C = A.B is column-major C^T = B^T.A^T: swap the operands, keep the flags.
  if (!tf32) {
    check(cublasSgemm(cublasHandle(), cublasOp(trans_b), cublasOp(trans_a), n, m, k, &alpha, b, ldb,
                      a, lda, &beta, c, ldc),
          "sgemm");
    return;
  }
  // The compute type asks for TF32 on this call alone; the handle stays strict fp32.
  check(cublasGemmEx(cublasHandle(), cublasOp(trans_b), cublasOp(trans_a), n, m, k, &alpha, b,
                     CUDA_R_32F, ldb, a, CUDA_R_32F, lda, &beta, c, CUDA_R_32F, ldc,
                     CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
        "sgemm (tf32)");
}

void reluForward(float* x, size_t n) {
  if (n > 0) reluForwardKernel<<<blocksFor(n), kThreads>>>(x, n);
  check(cudaGetLastError(), "relu forward");
}

void reluBackward(float* dx, const float* y, size_t n) {
  if (n > 0) reluBackwardKernel<<<blocksFor(n), kThreads>>>(dx, y, n);
  check(cudaGetLastError(), "relu backward");
}

void addBiasRows(float* y, const float* bias, int rows, int cols) {
  const size_t n = static_cast<size_t>(rows) * cols;
  if (n > 0) addBiasRowsKernel<<<blocksFor(n), kThreads>>>(y, bias, rows, cols);
  check(cudaGetLastError(), "add bias");
}

void synchronize() {
  check(cudaStreamSynchronize(cudaStreamPerThread), "synchronize");
}

}  // namespace ranklab::cuda
