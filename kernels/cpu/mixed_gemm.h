// The precision a layer's matrix products run in, for AMP: fp32 (plain sgemm), or bf16 /
// fp16 inputs with fp32 accumulation and an fp32 result (bf16_gemm.h, fp16_gemm.h). A layer
// keeps each input matrix as a GemmOperand, so a weight or activation is cast once per step
// and reused by the backward products; in fp32 an operand is only the caller's pointer.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/low_precision.h"

namespace ranklab::kernels {

enum class Precision { kFp32, kBf16, kFp16 };

const char* precisionName(Precision precision);

class GemmOperand {
 public:
  // Holds `count` floats from `data` in `precision`: a cast copy, or just the pointer.
  void set(Precision precision, const float* data, size_t count);
  // True when set() was last given this data pointer and count (the copy is still valid
  // as long as the caller has not changed the floats since).
  bool holds(const float* data, size_t count) const { return source_ == data && count_ == count; }

  Precision precision() const { return precision_; }
  const float* f32() const { return source_; }
  const uint16_t* low() const { return low_.data(); }

 private:
  Precision precision_ = Precision::kFp32;
  const float* source_ = nullptr;
  size_t count_ = 0;
  std::vector<uint16_t> low_;  // bf16 or fp16 bits
};

// C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C with A and B in `precision`: the
// fp32 pointers (a32, b32) for fp32, else the bf16 or fp16 bits (a_low, b_low). As sgemm.
void gemmIn(Precision precision, Trans trans_a, Trans trans_b, int m, int n, int k, float alpha,
            const float* a32, const uint16_t* a_low, int lda, const float* b32,
            const uint16_t* b_low, int ldb, float beta, float* c, int ldc);
// The same over two operands, which must agree in precision.
void gemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const GemmOperand& a,
          int lda, const GemmOperand& b, int ldb, float beta, float* c, int ldc);

}  // namespace ranklab::kernels
