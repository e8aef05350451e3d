// Row-major SGEMM and friends over OpenBLAS and oneDNN. Conventions: matrices are row-major,
// shapes written (rows, cols); C = alpha * op(A) * op(B) + beta * C.
#pragma once

#include <cstddef>

namespace ranklab::kernels {

enum class Trans { kNo, kYes };

// C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C. In oneDNN when built with it
// (unless RANKLAB_SGEMM=openblas), except narrow and short shapes on one BLAS thread, which
// skinny_gemm.h computes; without oneDNN, OpenBLAS.
void sgemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc);
// The same product always through OpenBLAS (the peak benchmark measures both libraries).
void sgemmOpenBlas(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a,
                   int lda, const float* b, int ldb, float beta, float* c, int ldc);
// Whether sgemm() gives this product to oneDNN (built in, not switched off by
// RANKLAB_SGEMM=openblas, and not a skinny shape on one BLAS thread).
bool sgemmRunsInOnednn(Trans trans_a, Trans trans_b, int n, int k);
#ifdef RANKLAB_HAVE_DNNL
// Sets the calling thread's OpenMP team (oneDNN's threads) to blasThreads() threads: every
// oneDNN call runs on it, so a process has one pool of compute threads.
void useOnednnTeam();
#endif
// "oneDNN" or "OpenBLAS": the library sgemm() calls for shapes the skinny kernels leave.
const char* sgemmLibrary();

// Compute threads per GEMM in this process (OpenBLAS's, and oneDNN's OpenMP team).
void setBlasThreads(int threads);
int blasThreads();

}  // namespace ranklab::kernels
