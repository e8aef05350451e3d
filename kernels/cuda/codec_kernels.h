// The gradient codecs' encode on the GPU (engine/train/device_codec_sync.h), so a gradient
// in GPU memory leaves it as the codec's payload instead of n floats: error feedback's add
// and scatter, DGC's momentum correction, the selections of kernels/cpu/sparse_select.h (the
// same elements: topk's ascending indices with ties at the k-th magnitude to the lowest,
// magnitudes compared as bits; threshold's |x| >= threshold), randomk's gather, and sign's
// encode (kernels/cpu/sign_pack.h, the same bits), fp16's and bf16's casts, qsgd's quantization.
// Pointers named `host` are host memory; the others device memory. Work is queued on the calling
// thread's own default stream (per-thread); what fills host memory returns once it is there (host
// vectors replaced).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu/mixed_gemm.h"
#include "kernels/cpu/qsgd_quantize.h"

namespace ranklab::cuda {

// to += from
void addInto(float* to, const float* from, size_t n);
// velocity = momentum * velocity + grads; grads = velocity
void accumulateMomentum(float* velocity, float* grads, size_t n, float momentum);
// to[host_indices[j]] = host_values[j], j < k, `to` being n floats; an index not below n is
// refused on the host before anything is queued (std::out_of_range naming it and n).
void scatter(float* to, size_t n, const uint32_t* host_indices, const float* host_values, size_t k);
void selectTopk(const float* x, size_t n, size_t k, std::vector<uint32_t>& host_indices,
                std::vector<float>& host_values);
void selectAtLeast(const float* x, size_t n, float threshold, std::vector<uint32_t>& host_indices,
                   std::vector<float>& host_values);
// host_values[j] = x[host_indices[j]], j < k; returns once they are in host memory.
void gather(const float* x, const uint32_t* host_indices, size_t k, float* host_values);
// The sign codec's payload of x (kernels/cpu/sign_pack.h) into host_payload; where
// `residual` is not null, residual = x - the payload's decoded value.
void encodeSign(const float* x, size_t n, size_t bucket, std::vector<uint8_t>& host_payload,
                float* residual);
// The fp16 or bf16 codec's payload of x (layer_kernels.h's castFromFp32) into host_payload;
// where `residual` is not null, residual = x - the payload's decoded value.
void encodeHalf(const float* x, size_t n, kernels::Precision precision,
                std::vector<uint8_t>& host_payload, float* residual);
// The qsgd codec's payload of x (kernels/cpu/qsgd_quantize.h's codes, packed LSB-first after
// the scales; qsgd_kernels.cu) into host_payload; `residual` as encodeSign's.
void encodeQsgd(const float* x, size_t n, int bits, size_t bucket, kernels::QsgdRounding rounding,
                std::vector<uint8_t>& host_payload, float* residual);

}  // namespace ranklab::cuda
