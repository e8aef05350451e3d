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
// One product a layer computes: what it is for, and its shape as sgemm() takes it.
struct GemmShape {
  const char* what;  // "forward", "weight grad", "input grad"
  Trans trans_a, trans_b;
  int m, n, k;
};

// The kernels sgemm() can give a product to.
enum class GemmKernel { kSkinny, kOnednn, kOpenBlas };
const char* gemmKernelName(GemmKernel kernel);
// Which kernel sgemm() gives this product to in this process (its BLAS threads, oneDNN
// built in and not switched off by RANKLAB_SGEMM=openblas, the kernels' instruction set).
GemmKernel sgemmKernel(Trans trans_a, Trans trans_b, int m, int n, int k);
// The same choice for any setting (the tests and the bench's kernel-choice table).
GemmKernel chooseSgemmKernel(Trans trans_a, Trans trans_b, int m, int n, int k, int threads,
                             bool onednn);
bool sgemmRunsInOnednn(Trans trans_a, Trans trans_b, int m, int n, int k);
// Whether `kernel` can compute this product here at all (the skinny kernels' shapes;
// oneDNN built in).
bool sgemmKernelApplies(GemmKernel kernel, Trans trans_a, Trans trans_b, int n, int k);
// sgemm() through the given kernel, which must apply (the bench times each one).
void sgemmWith(GemmKernel kernel, Trans trans_a, Trans trans_b, int m, int n, int k, float alpha,
               const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);
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
