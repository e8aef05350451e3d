#include "kernels/cpu/gemm.h"

#include <cblas.h>

#include "kernels/cpu/skinny_gemm.h"

namespace ranklab::kernels {

namespace {
CBLAS_TRANSPOSE toCblas(Trans t) {
  return t == Trans::kYes ? CblasTrans : CblasNoTrans;
}
}  // namespace

void sgemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  // Narrow or short shapes: OpenBLAS would spend much of its time packing. The skinny
  // kernels run on the calling thread, so with more BLAS threads OpenBLAS keeps them.
  if (k > 0 && openblas_get_num_threads() == 1) {
    if (trans_a == Trans::kNo && trans_b == Trans::kYes && skinny::fitsNT(n, k)) {
      return skinny::gemmNT(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
    if (trans_a == Trans::kNo && trans_b == Trans::kNo && skinny::fitsNN(n, k)) {
      return skinny::gemmNN(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
    if (trans_a == Trans::kYes && trans_b == Trans::kNo && skinny::fitsTN(n)) {
      return skinny::gemmTN(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
  }
  cblas_sgemm(CblasRowMajor, toCblas(trans_a), toCblas(trans_b), m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}

void setBlasThreads(int threads) {
  openblas_set_num_threads(threads);
}

int blasThreads() {
  return openblas_get_num_threads();
}

}  // namespace ranklab::kernels
