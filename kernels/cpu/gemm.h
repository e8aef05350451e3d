// Row-major SGEMM and friends over OpenBLAS. Conventions: matrices are row-major,
// shapes written (rows, cols); C = alpha * op(A) * op(B) + beta * C.
#pragma once

#include <cstddef>

namespace ranklab::kernels {

enum class Trans { kNo, kYes };

// C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C
void sgemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc);

// Threads OpenBLAS may use in this process.
void setBlasThreads(int threads);
int blasThreads();

}  // namespace ranklab::kernels
