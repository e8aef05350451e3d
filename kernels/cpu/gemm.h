// Row-major SGEMM and friends over OpenBLAS and oneDNN. Conventions: matrices are row-major,
// shapes written (rows, cols); C = alpha * op(A) * op(B) + beta * C.
#pragma once

#include <cstddef>

namespace ranklab::kernels {

enum class Trans { kNo, kYes };

// C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C. With one BLAS thread: narrow
// and short shapes in skinny_gemm.h, the rest in oneDNN when built with it (unless
// RANKLAB_SGEMM=openblas); with more threads, and without oneDNN, OpenBLAS.
void sgemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc);
// The same product always through OpenBLAS (the peak benchmark measures both libraries).
void sgemmOpenBlas(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a,
                   int lda, const float* b, int ldb, float beta, float* c, int ldc);
// Whether sgemm() gives this product to oneDNN (one BLAS thread, a shape the skinny kernels
// leave, oneDNN built in and not switched off by RANKLAB_SGEMM=openblas).
bool sgemmRunsInOnednn(Trans trans_a, Trans trans_b, int n, int k);
// "oneDNN" or "OpenBLAS": the library sgemm() calls for shapes the skinny kernels leave.
const char* sgemmLibrary();

// Threads OpenBLAS may use in this process.
void setBlasThreads(int threads);
int blasThreads();

}  // namespace ranklab::kernels
