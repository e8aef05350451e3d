// bf16 GEMM with fp32 accumulation and an fp32 result: the mixed-precision matmul AMP
// uses. Same conventions as sgemm (gemm.h): row-major, C = alpha * op(A) op(B) + beta * C.
// Backends: oneDNN's matmul (AMX or AVX-512 BF16 kernels where the CPU has them) when
// ranklab was built with oneDNN and oneDNN has a bf16 kernel for the CPU (it has none below
// AVX-512); otherwise, or with RANKLAB_BF16_GEMM=portable in the environment, the bf16
// inputs are widened to fp32 (exactly) and multiplied by sgemm, which gives the same
// products with a different summation order.
#pragma once

#include <string>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/low_precision.h"

namespace ranklab::kernels {

void gemmBf16(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const bf16_t* a,
              int lda, const bf16_t* b, int ldb, float beta, float* c, int ldc);

// The portable path alone (for tests and comparisons).
void gemmBf16Portable(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha,
                      const bf16_t* a, int lda, const bf16_t* b, int ldb, float beta, float* c,
                      int ldc);

// "onednn (<kernel>)" or "portable (sgemm on widened inputs...)": what gemmBf16 runs here,
// and, where oneDNN was passed over, why.
std::string bf16GemmBackend();

}  // namespace ranklab::kernels
