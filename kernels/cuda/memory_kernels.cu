#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_scratch.h"
#include "kernels/cuda/grid_stride.h"
#include "kernels/cuda/memory_kernels.h"

namespace ranklab::cuda {

namespace {

// No FMA contraction (__fmul_rn / __fadd_rn): each element rounds as the CPU kernel does,
// which is compiled with -ffp-contract=off, so the two give the same bits.
__global__ void sgdKernel(float* params, const float* grads, float* velocity, size_t n, float lr,
                          float momentum, float weight_decay, bool nesterov) {
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    const float g = __fadd_rn(grads[i], __fmul_rn(weight_decay, params[i]));
    const float v = __fadd_rn(__fmul_rn(momentum, velocity[i]), g);
    velocity[i] = v;
    const float step = nesterov ? __fadd_rn(g, __fmul_rn(momentum, v)) : v;
    params[i] = __fsub_rn(params[i], __fmul_rn(lr, step));
  }
}

__global__ void adamKernel(float* params, const float* grads, float* first_moment,
                           float* second_moment, size_t n, kernels::AdamScalars s) {
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    const float p = __fmul_rn(params[i], s.decay_factor);
    const float g = __fadd_rn(grads[i], __fmul_rn(s.l2, p));
    const float m = __fadd_rn(__fmul_rn(first_moment[i], s.beta1), __fmul_rn(s.one_minus_beta1, g));
    const float v = __fadd_rn(__fmul_rn(second_moment[i], s.beta2),
                              __fmul_rn(__fmul_rn(s.one_minus_beta2, g), g));
    first_moment[i] = m;
    second_moment[i] = v;
    const float denominator = __fadd_rn(__fdiv_rn(__fsqrt_rn(v), s.sqrt_bias_correction2), s.eps);
    params[i] = __fsub_rn(p, __fdiv_rn(__fmul_rn(s.step_size, m), denominator));
  }
}

__global__ void scaleCheckKernel(float* x, size_t n, float factor, int* bad) {
  for (size_t i = firstIndex(); i < n; i += gridStride()) {
    const float v = __fmul_rn(x[i], factor);
    x[i] = v;
    if (!isfinite(v)) *bad = 1;  // any writer will do: only "some" matters
  }
}

// Each thread sums its grid-stride elements' squares in double, each block its threads'
// through shared memory, and one atomic add per block joins the blocks.
__global__ void sumOfSquaresKernel(const float* x, size_t n, double* total) {
  __shared__ double partial[kThreads];
  double sum = 0;
  for (size_t i = firstIndex(); i < n; i += gridStride()) sum += double(x[i]) * double(x[i]);
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, partial[0]);
}

__global__ void fillKernel(float* x, size_t n, float value) {
  for (size_t i = firstIndex(); i < n; i += gridStride()) x[i] = value;
}

}  // namespace

void sgdUpdate(float* params, const float* grads, float* velocity, size_t n, float lr,
               float momentum, float weight_decay, bool nesterov) {
  if (n == 0) return;
  sgdKernel<<<blocksFor(n), kThreads>>>(params, grads, velocity, n, lr, momentum, weight_decay,
                                        nesterov);
  check(cudaGetLastError(), "sgd update");
}

void adamUpdate(float* params, const float* grads, float* first_moment, float* second_moment,
                size_t n, const kernels::AdamScalars& s) {
  if (n == 0) return;
  adamKernel<<<blocksFor(n), kThreads>>>(params, grads, first_moment, second_moment, n, s);
  check(cudaGetLastError(), "adam update");
}

bool scaleAndCheckFinite(float* x, size_t n, float factor) {
  if (n == 0) return true;
  // One flag per thread and GPU, kept (the check runs once a step) and freed with the thread:
  // a flag made on another GPU, or shared with another thread's stream, would be wrong.
  thread_local ThreadScratch overflow;
  int* flag = overflow.get<int>(1);
  check(cudaMemsetAsync(flag, 0, sizeof(int), cudaStreamPerThread), "clear overflow flag");
  scaleCheckKernel<<<blocksFor(n), kThreads>>>(x, n, factor, flag);
  check(cudaGetLastError(), "unscale");
  int bad = 0;
  check(cudaMemcpy(&bad, flag, sizeof bad, cudaMemcpyDeviceToHost), "read overflow flag");
  return bad == 0;
}

double sumOfSquares(const float* x, size_t n) {
  if (n == 0) return 0;
  thread_local ThreadScratch scratch;  // as the overflow flag: one per thread and GPU
  double* total = scratch.get<double>(1);
  check(cudaMemsetAsync(total, 0, sizeof(double), cudaStreamPerThread), "clear the sum");
  sumOfSquaresKernel<<<blocksFor(n), kThreads>>>(x, n, total);
  check(cudaGetLastError(), "sum of squares");
  double sum = 0;
  check(cudaMemcpy(&sum, total, sizeof sum, cudaMemcpyDeviceToHost), "read the sum");
  return sum;
}

void fill(float* x, size_t n, float value) {
  if (n == 0) return;
  if (value == 0.f) {
    check(cudaMemsetAsync(x, 0, n * sizeof(float), cudaStreamPerThread), "zero");
    return;
  }
  fillKernel<<<blocksFor(n), kThreads>>>(x, n, value);
  check(cudaGetLastError(), "fill");
}

void copyDevice(float* to, const float* from, size_t n) {
  if (n == 0 || to == from) return;
  check(cudaMemcpyAsync(to, from, n * sizeof(float), cudaMemcpyDeviceToDevice, cudaStreamPerThread),
        "copy");
}

void upload(float* to, const float* host, size_t n) {
  if (n == 0) return;
  check(cudaMemcpy(to, host, n * sizeof(float), cudaMemcpyHostToDevice), "upload");
}

void uploadAsync(void* to, const void* host, size_t bytes) {
  if (bytes == 0) return;
  check(cudaMemcpyAsync(to, host, bytes, cudaMemcpyHostToDevice, cudaStreamPerThread),
        "upload (async)");
}

std::shared_ptr<void> pinHost(void* host, size_t bytes) {
  if (bytes == 0) return nullptr;
  const cudaError_t locked = cudaHostRegister(host, bytes, cudaHostRegisterDefault);
  if (locked != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it so the next check does not report it
    throw std::runtime_error("page-lock " + std::to_string(bytes) +
                             " bytes: " + cudaGetErrorString(locked));
  }
  // No throw from a deleter; at process exit the runtime may already be gone.
  return std::shared_ptr<void>(host, [](void* p) { cudaHostUnregister(p); });
}

void download(float* host, const float* from, size_t n) {
  if (n == 0) return;
  check(cudaMemcpy(host, from, n * sizeof(float), cudaMemcpyDeviceToHost), "download");
}

}  // namespace ranklab::cuda
