// QSGD's encode on the GPU (codec_kernels.h's encodeQsgd): kernels/cpu/qsgd_quantize.h's
// scales, codes and left-over, bit for bit, and wire_format's LSB-first packing.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/cpu/qsgd_quantize.h"
#include "kernels/cuda/codec_kernels.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_scratch.h"
#include "kernels/cuda/grid_stride.h"
#include "kernels/splitmix.h"

namespace ranklab::cuda {

namespace {

// The CPU's std::max(m, a): a NaN never replaces what is held.
__device__ float larger(float m, float a) {
  return m < a ? a : m;
}

// A bucket per block at a time (blocks stepping by the grid, so any number of buckets): its
// largest |x|. The loop's bounds are the block's alone, so every thread meets every barrier;
// after the last one only thread 0 reads, and only its own slot, part[0].
__global__ void qsgdScales(const float* x, size_t n, size_t bucket, size_t buckets, float* scales) {
  __shared__ float part[kThreads];
  for (size_t b = blockIdx.x; b < buckets; b += gridDim.x) {
    const size_t begin = b * bucket;
    const size_t end = begin + bucket < n ? begin + bucket : n;
    float m = 0.f;
    for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x) m = larger(m, fabsf(x[i]));
    part[threadIdx.x] = m;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half)
        part[threadIdx.x] = larger(part[threadIdx.x], part[threadIdx.x + half]);
      __syncthreads();
    }
    if (threadIdx.x == 0) scales[b] = part[0];
  }
}

// Each element's code from its own draw of the stream, rounded as the CPU's loop rounds.
__global__ void qsgdCodes(const float* x, size_t n, int bits, size_t bucket,
                          kernels::QsgdRounding rounding, const float* scales,
                          unsigned char* codes) {
  const uint32_t sign_bit = 1u << (bits - 1);
  const auto s = static_cast<float>(sign_bit - 1);
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t b = i / bucket, within = i - b * bucket;
    const float scale = scales[b];
    const float inv = scale > 0.f ? __fdiv_rn(s, scale) : 0.f;
    float u = 0.5f;
    if (!rounding.nearest) {
      const uint64_t draw = b * ((bucket + 3) / 4) + within / 4;
      const uint64_t random =
          kernels::splitMix64(rounding.stream + (draw + 1) * kernels::kSplitMixStep);
      u = static_cast<float>((random >> (16 * (within % 4))) & 0xffffu) * 0x1.0p-16f;
    }
    const float scaled = __fmul_rn(fabsf(x[i]), inv);
    const float a = s < scaled ? s : scaled;  // std::min(scaled, s)
    const auto floor = static_cast<uint32_t>(a);
    const uint32_t up = u < __fsub_rn(a, static_cast<float>(floor));
    codes[i] = static_cast<unsigned char>((signbit(x[i]) ? sign_bit : 0u) | (floor + up));
  }
}

// One thread per payload byte: the `bits`-bit codes whose bits fall in it, LSB-first.
__global__ void packCodes(const unsigned char* codes, size_t n, int bits, size_t bytes,
                          unsigned char* out) {
  for (size_t j = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; j < bytes;
       j += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t first = j * 8;
    uint32_t byte = 0;
    for (size_t i = first / bits; i < n && i * bits < first + 8; ++i) {
      const size_t at = i * bits;
      const uint32_t code = codes[i];
      byte |= at >= first ? code << (at - first) : code >> (first - at);
    }
    out[j] = static_cast<unsigned char>(byte & 0xffu);
  }
}

__global__ void qsgdLeftOver(const float* x, size_t n, int bits, size_t bucket, const float* scales,
                             const unsigned char* codes, float* residual) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    residual[i] = __fsub_rn(x[i], __fmul_rn(kernels::qsgdUnit(codes[i], bits), scales[i / bucket]));
}

}  // namespace

void encodeQsgd(const float* x, size_t n, int bits, size_t bucket, kernels::QsgdRounding rounding,
                std::vector<uint8_t>& host_payload, float* residual) {
  if (bits < 2 || bits > 8)
    throw std::invalid_argument("qsgd on the GPU: bits must be 2..8, got " + std::to_string(bits));
  const size_t buckets = (n + bucket - 1) / bucket, scale_bytes = buckets * sizeof(float);
  const size_t packed = (n * static_cast<size_t>(bits) + 7) / 8;
  host_payload.resize(scale_bytes + packed);
  if (n == 0) return;
  Scratch scratch;
  auto* payload = static_cast<unsigned char*>(scratch.get(host_payload.size()));
  auto* scales = reinterpret_cast<float*>(payload);
  auto* codes = static_cast<unsigned char*>(scratch.get(n));
  const auto scale_blocks = static_cast<unsigned>(buckets < kMaxBlocks ? buckets : kMaxBlocks);
  qsgdScales<<<scale_blocks, kThreads>>>(x, n, bucket, buckets, scales);
  check(cudaGetLastError(), "qsgd scales");
  qsgdCodes<<<blocksFor(n), kThreads>>>(x, n, bits, bucket, rounding, scales, codes);
  check(cudaGetLastError(), "qsgd codes");
  packCodes<<<blocksFor(packed), kThreads>>>(codes, n, bits, packed, payload + scale_bytes);
  check(cudaGetLastError(), "qsgd packing");
  if (residual) {
    qsgdLeftOver<<<blocksFor(n), kThreads>>>(x, n, bits, bucket, scales, codes, residual);
    check(cudaGetLastError(), "qsgd residual");
  }
  check(cudaMemcpy(host_payload.data(), payload, host_payload.size(), cudaMemcpyDeviceToHost),
        "download qsgd payload");
}

}  // namespace ranklab::cuda
