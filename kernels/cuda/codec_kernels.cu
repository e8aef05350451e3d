#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <thrust/iterator/counting_iterator.h>
#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/cpu/sparse_select.h"
#include "kernels/cuda/codec_kernels.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_scratch.h"
#include "kernels/cuda/grid_stride.h"
#include "kernels/cuda/layer_kernels.h"

namespace ranklab::cuda {

namespace {

constexpr int kDigitBits = 8;
constexpr int kDigits = 1 << kDigitBits;

__device__ uint32_t magnitudeBits(float x) {
  return __float_as_uint(x) & 0x7fffffffu;
}

__global__ void addKernel(float* to, const float* from, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    to[i] = __fadd_rn(to[i], from[i]);
}

// Rounded as the CPU's loop (no FMA on the baseline x86-64 it is built for).
__global__ void momentumKernel(float* velocity, float* grads, size_t n, float momentum) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    grads[i] = velocity[i] = __fadd_rn(__fmul_rn(momentum, velocity[i]), grads[i]);
}

__global__ void scatterKernel(float* to, const uint32_t* indices, const float* values, size_t k) {
  for (size_t j = firstIndex(); j < k; j += gridStride()) to[indices[j]] = values[j];
}

// Counts, among the elements whose magnitude bits above `shift + kDigitBits` equal
// `prefix`'s, how many have each digit at `shift`.
__global__ void digitHistogram(const float* x, size_t n, uint32_t prefix, int shift,
                               unsigned int* counts) {
  __shared__ unsigned int local[kDigits];
  for (int d = threadIdx.x; d < kDigits; d += blockDim.x) local[d] = 0;
  __syncthreads();
  const int high = shift + kDigitBits;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint32_t m = magnitudeBits(x[i]);
    if (high >= 32 || (m >> high) == (prefix >> high))
      atomicAdd(&local[(m >> shift) & (kDigits - 1)], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < kDigits; d += blockDim.x)
    if (local[d] != 0) atomicAdd(&counts[d], local[d]);
}

__global__ void tieFlags(const float* x, size_t n, uint32_t kth, unsigned int* equal) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    equal[i] = magnitudeBits(x[i]) == kth;
}

// keep: above the k-th magnitude, or one of the first `ties` elements equal to it (the
// exclusive prefix count of ties before i is tie_rank[i]).
__global__ void keepFlags(const float* x, size_t n, uint32_t kth, const unsigned int* tie_rank,
                          size_t ties, unsigned char* keep) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint32_t m = magnitudeBits(x[i]);
    keep[i] = m > kth || (m == kth && tie_rank[i] < ties);
  }
}

__global__ void atLeastFlags(const float* x, size_t n, float threshold, unsigned char* keep) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    keep[i] = fabsf(x[i]) >= threshold;  // false for NaN, as on the CPU
}

__global__ void gatherKernel(const float* x, const uint32_t* indices, float* values, size_t k) {
  for (size_t j = firstIndex(); j < k; j += gridStride()) values[j] = x[indices[j]];
}

// A bucket per thread: its mean |x| in the CPU's order (four interleaved double partial
// sums), so the scale has the CPU's bits.
__global__ void signScales(const float* x, size_t n, size_t bucket, size_t buckets, float* scales) {
  for (size_t b = firstIndex(); b < buckets; b += gridStride()) {
    const size_t begin = b * bucket, end = begin + bucket < n ? begin + bucket : n;
    double part[4] = {};
    size_t i = begin;
    for (; i + 4 <= end; i += 4)
      for (int j = 0; j < 4; ++j) part[j] = __dadd_rn(part[j], fabs(static_cast<double>(x[i + j])));
    for (; i < end; ++i) part[0] = __dadd_rn(part[0], fabs(static_cast<double>(x[i])));
    const double sum = __dadd_rn(__dadd_rn(part[0], part[1]), __dadd_rn(part[2], part[3]));
    scales[b] = static_cast<float>(__ddiv_rn(sum, static_cast<double>(end - begin)));
  }
}

// A byte of sign bits per thread (1 = negative, LSB-first).
__global__ void signBits(const float* x, size_t n, size_t bytes, unsigned char* bits) {
  for (size_t byte = firstIndex(); byte < bytes; byte += gridStride()) {
    unsigned char packed = 0;
    for (size_t i = byte * 8; i < n && i < byte * 8 + 8; ++i)
      packed |= static_cast<unsigned char>((x[i] < 0.f) << (i % 8));
    bits[byte] = packed;
  }
}

__global__ void signLeftOver(const float* x, size_t n, size_t bucket, const float* scales,
                             const unsigned char* bits, float* residual) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float scale = scales[i / bucket];
    residual[i] = __fsub_rn(x[i], (bits[i / 8] >> (i % 8) & 1u) ? -scale : scale);
  }
}

// residual = x - the 16-bit pattern's value (what a cast to bf16 or fp16 lost).
__global__ void halfLeftOver(const float* x, size_t n, bool bf16, const uint16_t* halves,
                             float* residual) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float sent = bf16 ? __bfloat162float(__ushort_as_bfloat16(halves[i]))
                            : __half2float(__ushort_as_half(halves[i]));
    residual[i] = __fsub_rn(x[i], sent);
  }
}

// The k-th largest magnitude's bits, a digit at a time from the top (four passes of a
// 256-bin histogram); `ties` is how many elements equal to it are among the k.
uint32_t kthLargest(const float* x, size_t n, size_t k, Scratch& scratch, size_t& ties) {
  auto* counts = static_cast<unsigned int*>(scratch.get(kDigits * sizeof(unsigned int)));
  unsigned int host_counts[kDigits];
  uint32_t prefix = 0;
  size_t wanted = k;  // among the elements matching the prefix, the rank sought (1-based)
  for (int shift = 32 - kDigitBits; shift >= 0; shift -= kDigitBits) {
    check(cudaMemsetAsync(counts, 0, kDigits * sizeof(unsigned int), cudaStreamPerThread),
          "clear histogram");
    digitHistogram<<<blocksFor(n), kThreads>>>(x, n, prefix, shift, counts);
    check(cudaGetLastError(), "topk histogram");
    check(cudaMemcpy(host_counts, counts, sizeof host_counts, cudaMemcpyDeviceToHost),
          "read topk histogram");
    int digit = kDigits - 1;
    for (; digit > 0 && host_counts[digit] < wanted; --digit) wanted -= host_counts[digit];
    prefix |= static_cast<uint32_t>(digit) << shift;
  }
  ties = wanted;
  return prefix;
}

// The selections name elements by uint32_t indices (the sparse payload's), and count them in
// 32 bits: a longer x is refused, naming its length.
void checkSelectable(size_t n, const char* operation) {
  constexpr size_t kMost = std::numeric_limits<uint32_t>::max();
  if (n > kMost) {
    throw std::length_error(std::string(operation) + " on the GPU: " + std::to_string(n) +
                            " elements, more than the " + std::to_string(kMost) +
                            " its uint32 indices reach");
  }
}

// A copy of k host indices in the scratch's device memory.
const uint32_t* indicesOnDevice(Scratch& scratch, const uint32_t* host_indices, size_t k) {
  auto* indices = static_cast<uint32_t*>(scratch.get(k * sizeof(uint32_t)));
  check(cudaMemcpy(indices, host_indices, k * sizeof(uint32_t), cudaMemcpyHostToDevice),
        "upload indices");
  return indices;
}

// Replaces the host vectors with the elements `keep` flags, in index order.
void compactFlagged(const float* x, size_t n, const unsigned char* keep, Scratch& scratch,
                    std::vector<uint32_t>& host_indices, std::vector<float>& host_values) {
  const auto items = static_cast<int64_t>(n);  // CUB's count: 64 bits, as its offsets
  auto* indices = static_cast<uint32_t*>(scratch.get(n * sizeof(uint32_t)));
  auto* selected = static_cast<int64_t*>(scratch.get(sizeof(int64_t)));
  thrust::counting_iterator<uint32_t> positions(0);
  size_t bytes = 0;
  check(cub::DeviceSelect::Flagged(nullptr, bytes, positions, keep, indices, selected, items,
                                   cudaStreamPerThread),
        "size select");
  check(cub::DeviceSelect::Flagged(scratch.get(bytes), bytes, positions, keep, indices, selected,
                                   items, cudaStreamPerThread),
        "select");
  int64_t found = 0;
  check(cudaMemcpy(&found, selected, sizeof found, cudaMemcpyDeviceToHost), "read select count");
  const auto k = static_cast<size_t>(found);
  host_indices.resize(k);
  host_values.resize(k);
  if (k == 0) return;
  auto* values = static_cast<float*>(scratch.get(k * sizeof(float)));
  gatherKernel<<<blocksFor(k), kThreads>>>(x, indices, values, k);
  check(cudaGetLastError(), "gather selected");
  check(cudaMemcpy(host_indices.data(), indices, k * sizeof(uint32_t), cudaMemcpyDeviceToHost),
        "download selected indices");
  check(cudaMemcpy(host_values.data(), values, k * sizeof(float), cudaMemcpyDeviceToHost),
        "download selected values");
}

}  // namespace

void addInto(float* to, const float* from, size_t n) {
  if (n == 0) return;
  addKernel<<<blocksFor(n), kThreads>>>(to, from, n);
  check(cudaGetLastError(), "add");
}

void accumulateMomentum(float* velocity, float* grads, size_t n, float momentum) {
  if (n == 0) return;
  momentumKernel<<<blocksFor(n), kThreads>>>(velocity, grads, n, momentum);
  check(cudaGetLastError(), "momentum correction");
}

void scatter(float* to, size_t n, const uint32_t* host_indices, const float* host_values,
             size_t k) {
  kernels::checkScatterIndices(host_indices, k, n);  // the kernel writes where it is told
  if (k == 0) return;
  Scratch scratch;
  const uint32_t* indices = indicesOnDevice(scratch, host_indices, k);
  auto* values = static_cast<float*>(scratch.get(k * sizeof(float)));
  check(cudaMemcpy(values, host_values, k * sizeof(float), cudaMemcpyHostToDevice),
        "upload scatter values");
  scatterKernel<<<blocksFor(k), kThreads>>>(to, indices, values, k);
  check(cudaGetLastError(), "scatter");
}

void selectTopk(const float* x, size_t n, size_t k, std::vector<uint32_t>& host_indices,
                std::vector<float>& host_values) {
  host_indices.clear();
  host_values.clear();
  if (k == 0 || n == 0) return;
  if (k > n)
    throw std::invalid_argument("topk: k " + std::to_string(k) + " > n " + std::to_string(n));
  checkSelectable(n, "topk");
  Scratch scratch;
  size_t ties = 0;
  const uint32_t kth = kthLargest(x, n, k, scratch, ties);
  auto* equal = static_cast<unsigned int*>(scratch.get(n * sizeof(unsigned int)));
  auto* tie_rank = static_cast<unsigned int*>(scratch.get(n * sizeof(unsigned int)));
  auto* keep = static_cast<unsigned char*>(scratch.get(n));
  tieFlags<<<blocksFor(n), kThreads>>>(x, n, kth, equal);
  check(cudaGetLastError(), "topk ties");
  size_t bytes = 0;
  const auto items = static_cast<uint32_t>(n);  // checked above: 32-bit offsets suffice
  check(cub::DeviceScan::ExclusiveSum(nullptr, bytes, equal, tie_rank, items, cudaStreamPerThread),
        "size scan");
  check(cub::DeviceScan::ExclusiveSum(scratch.get(bytes), bytes, equal, tie_rank, items,
                                      cudaStreamPerThread),
        "topk tie ranks");
  keepFlags<<<blocksFor(n), kThreads>>>(x, n, kth, tie_rank, ties, keep);
  check(cudaGetLastError(), "topk flags");
  compactFlagged(x, n, keep, scratch, host_indices, host_values);
  if (host_indices.size() != k)
    throw std::logic_error("topk on the GPU selected " + std::to_string(host_indices.size()) +
                           " of " + std::to_string(k));
}

void selectAtLeast(const float* x, size_t n, float threshold, std::vector<uint32_t>& host_indices,
                   std::vector<float>& host_values) {
  host_indices.clear();
  host_values.clear();
  if (n == 0) return;
  checkSelectable(n, "threshold");
  Scratch scratch;
  auto* keep = static_cast<unsigned char*>(scratch.get(n));
  atLeastFlags<<<blocksFor(n), kThreads>>>(x, n, threshold, keep);
  check(cudaGetLastError(), "threshold flags");
  compactFlagged(x, n, keep, scratch, host_indices, host_values);
}

void gather(const float* x, const uint32_t* host_indices, size_t k, float* host_values) {
  if (k == 0) return;
  Scratch scratch;
  const uint32_t* indices = indicesOnDevice(scratch, host_indices, k);
  auto* values = static_cast<float*>(scratch.get(k * sizeof(float)));
  gatherKernel<<<blocksFor(k), kThreads>>>(x, indices, values, k);
  check(cudaGetLastError(), "gather");
  check(cudaMemcpy(host_values, values, k * sizeof(float), cudaMemcpyDeviceToHost),
        "download gathered values");
}

void encodeSign(const float* x, size_t n, size_t bucket, std::vector<uint8_t>& host_payload,
                float* residual) {
  const size_t buckets = (n + bucket - 1) / bucket, scale_bytes = buckets * sizeof(float);
  host_payload.resize(scale_bytes + (n + 7) / 8);
  if (n == 0) return;
  Scratch scratch;
  auto* payload = static_cast<unsigned char*>(scratch.get(host_payload.size()));
  auto* scales = reinterpret_cast<float*>(payload);
  unsigned char* bits = payload + scale_bytes;
  signScales<<<blocksFor(buckets), kThreads>>>(x, n, bucket, buckets, scales);
  check(cudaGetLastError(), "sign scales");
  const size_t bytes = (n + 7) / 8;
  signBits<<<blocksFor(bytes), kThreads>>>(x, n, bytes, bits);
  check(cudaGetLastError(), "sign bits");
  if (residual) {
    signLeftOver<<<blocksFor(n), kThreads>>>(x, n, bucket, scales, bits, residual);
    check(cudaGetLastError(), "sign residual");
  }
  check(cudaMemcpy(host_payload.data(), payload, host_payload.size(), cudaMemcpyDeviceToHost),
        "download sign payload");
}

void encodeHalf(const float* x, size_t n, kernels::Precision precision,
                std::vector<uint8_t>& host_payload, float* residual) {
  host_payload.resize(n * sizeof(uint16_t));
  if (n == 0) return;
  Scratch scratch;
  auto* halves = static_cast<uint16_t*>(scratch.get(host_payload.size()));
  castFromFp32(precision, x, halves, n);  // throws for a precision other than bf16 or fp16
  if (residual) {
    halfLeftOver<<<blocksFor(n), kThreads>>>(x, n, precision == kernels::Precision::kBf16, halves,
                                             residual);
    check(cudaGetLastError(), "cast residual");
  }
  check(cudaMemcpy(host_payload.data(), halves, host_payload.size(), cudaMemcpyDeviceToHost),
        "download cast payload");
}

}  // namespace ranklab::cuda
