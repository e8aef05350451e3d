#include "kernels/cpu/gemm.h"

#include <cblas.h>

#include <cstdlib>
#include <cstring>

#include "kernels/cpu/skinny_gemm.h"

#ifdef RANKLAB_HAVE_DNNL
#include <dnnl.h>
#include <omp.h>
#endif

namespace ranklab::kernels {

namespace {

CBLAS_TRANSPOSE toCblas(Trans t) {
  return t == Trans::kYes ? CblasTrans : CblasNoTrans;
}

#ifdef RANKLAB_HAVE_DNNL
bool openBlasForced() {
  const char* env = std::getenv("RANKLAB_SGEMM");
  return env && std::strcmp(env, "openblas") == 0;
}

// oneDNN's SGEMM on the calling thread's OpenMP team; row-major like ours.
void onednnSgemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a,
                 int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  useOnednnTeam();
  dnnl_sgemm(trans_a == Trans::kYes ? 'T' : 'N', trans_b == Trans::kYes ? 'T' : 'N', m, n, k, alpha,
             a, lda, b, ldb, beta, c, ldc);
}
#endif

// Whether GEMMs beyond the skinny shapes go to oneDNN.
bool onednnChosen() {
#ifdef RANKLAB_HAVE_DNNL
  static const bool use = !openBlasForced();
  return use;
#else
  return false;
#endif
}

// The narrow and short shapes the skinny kernels compute (one BLAS thread only).
bool skinnyTakes(Trans trans_a, Trans trans_b, int n, int k) {
  if (trans_a == Trans::kNo && trans_b == Trans::kYes) return skinny::fitsNT(n, k);
  if (trans_a == Trans::kNo && trans_b == Trans::kNo) return skinny::fitsNN(n, k);
  if (trans_a == Trans::kYes && trans_b == Trans::kNo) return skinny::fitsTN(n);
  return false;
}

}  // namespace

#ifdef RANKLAB_HAVE_DNNL
void useOnednnTeam() {
  if (const int threads = blasThreads(); omp_get_max_threads() != threads) {
    omp_set_num_threads(threads);
  }
}
#endif

bool sgemmRunsInOnednn(Trans trans_a, Trans trans_b, int n, int k) {
  // One thread: oneDNN's AVX-512 SGEMM measured 5-20 % faster than OpenBLAS's on every
  // shape tried, the MLP's and large squares alike (bench/LOG.md). More threads: every
  // product on oneDNN's one OpenMP team, because OpenBLAS's threads and OpenMP's spinning
  // ones fight for the cores when a step uses both (bf16 AMP with an fp32 head ran at 1.0x
  // fp32 on 2 threads instead of 1.8x).
  if (k <= 0 || !onednnChosen()) return false;
  return blasThreads() > 1 || !skinnyTakes(trans_a, trans_b, n, k);
}

void sgemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  // Narrow or short shapes: OpenBLAS would spend much of its time packing. The skinny
  // kernels run on the calling thread, so with more BLAS threads OpenBLAS keeps them.
  if (k > 0 && openblas_get_num_threads() == 1 && skinnyTakes(trans_a, trans_b, n, k)) {
    if (trans_b == Trans::kYes) return skinny::gemmNT(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (trans_a == Trans::kNo) return skinny::gemmNN(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return skinny::gemmTN(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
#ifdef RANKLAB_HAVE_DNNL
  if (sgemmRunsInOnednn(trans_a, trans_b, n, k)) {
    return onednnSgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
#endif
  sgemmOpenBlas(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void sgemmOpenBlas(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a,
                   int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, toCblas(trans_a), toCblas(trans_b), m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}

const char* sgemmLibrary() {
  return onednnChosen() ? "oneDNN" : "OpenBLAS";
}

void setBlasThreads(int threads) {
  openblas_set_num_threads(threads);
}

int blasThreads() {
  return openblas_get_num_threads();
}

}  // namespace ranklab::kernels
