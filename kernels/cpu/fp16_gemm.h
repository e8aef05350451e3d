// fp16 GEMM as fp16 AMP computes it: fp16 inputs, products summed in fp32, the result
// rounded to fp16 (so a value beyond 65504 becomes inf, which the loss scaler then sees)
// and widened back: C = alpha * fp16(op(A) op(B)) + beta * C, C in fp32. This CPU's
// oneDNN has no fp16 matmul, so inputs are widened with F16C and multiplied by sgemm:
// fp16's precision and range, not its speed. Conventions as sgemm (gemm.h).
#pragma once

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/low_precision.h"

namespace ranklab::kernels {

void gemmFp16(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const fp16_t* a,
              int lda, const fp16_t* b, int ldb, float beta, float* c, int ldc);

}  // namespace ranklab::kernels
