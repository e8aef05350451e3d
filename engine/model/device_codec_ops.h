// The codecs' encode where the gradient is (engine/train/device_encoder.h), so only their
// payload crosses to the host instead of n floats. Pointers named `host` are host memory;
// every other pointer is the device's. One of a ComputeDevice's concerns (compute_device.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu/mixed_gemm.h"
#include "kernels/cpu/qsgd_quantize.h"

namespace ranklab {

class DeviceCodecOps {
 public:
  virtual ~DeviceCodecOps() = default;
  // velocity = momentum * velocity + grads, then grads = velocity (DGC's momentum correction).
  virtual void accumulateMomentum(float* velocity, float* grads, size_t n,
                                  float momentum) const = 0;
  // to[host_indices[j]] = host_values[j] for j < k, `to` being n floats (an index not below
  // n throws std::out_of_range, nothing written).
  virtual void scatter(float* to, size_t n, const uint32_t* host_indices, const float* host_values,
                       size_t k) const = 0;
  // The selections of kernels/cpu/sparse_select.h (topk's k, threshold's |x| >= threshold),
  // their indices and values replacing the host vectors' contents.
  virtual void selectTopk(const float* x, size_t n, size_t k, std::vector<uint32_t>& host_indices,
                          std::vector<float>& host_values) const = 0;
  virtual void selectAtLeast(const float* x, size_t n, float threshold,
                             std::vector<uint32_t>& host_indices,
                             std::vector<float>& host_values) const = 0;
  // host_values[j] = x[host_indices[j]] for j < k (randomk's pick).
  virtual void gather(const float* x, const uint32_t* host_indices, size_t k,
                      float* host_values) const = 0;
  // The sign codec's encode of x (kernels/cpu/sign_pack.h, buckets of `bucket`), its payload
  // replacing host_payload; where `residual` (device memory) is not null, what error
  // feedback keeps: residual = x - the payload's decoded value.
  virtual void encodeSign(const float* x, size_t n, size_t bucket,
                          std::vector<uint8_t>& host_payload, float* residual) const = 0;
  // The fp16 or bf16 codec's encode of x (n 16-bit patterns, rounded to nearest even; the
  // precision kBf16 or kFp16), replacing host_payload; `residual` as encodeSign's.
  virtual void encodeHalf(const float* x, size_t n, kernels::Precision precision,
                          std::vector<uint8_t>& host_payload, float* residual) const = 0;
  // The qsgd codec's encode of x (kernels/cpu/qsgd_quantize.h: `bits`, buckets of `bucket`,
  // rounded as `rounding` says), replacing host_payload; `residual` as encodeSign's.
  virtual void encodeQsgd(const float* x, size_t n, int bits, size_t bucket,
                          kernels::QsgdRounding rounding, std::vector<uint8_t>& host_payload,
                          float* residual) const = 0;
};

}  // namespace ranklab
