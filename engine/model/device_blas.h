// The dense arithmetic over a device's buffers that is neither a layer nor a codec: a
// residual sum and a matrix product, used by the GPT's blocks and tied head
// (transformer_block.cpp), error feedback and PowerSGD's projections
// (engine/train/powersgd_sync.h). All pointers are the device's. One of a
// ComputeDevice's concerns (compute_device.h).
#pragma once

#include <cstddef>

#include "kernels/cpu/gemm.h"

namespace ranklab {

class DeviceBlas {
 public:
  virtual ~DeviceBlas() = default;
  // to += from.
  virtual void add(float* to, const float* from, size_t n) const = 0;
  // C (m, n) = alpha * op(A) . op(B) + beta * C, row-major as kernels::sgemm.
  virtual void gemm(kernels::Trans trans_a, kernels::Trans trans_b, int m, int n, int k,
                    float alpha, const float* a, int lda, const float* b, int ldb, float beta,
                    float* c, int ldc) const = 0;
};

}  // namespace ranklab
