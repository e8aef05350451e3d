#include "kernels/cpu/gemm.h"

#include <cblas.h>

namespace ranklab::kernels {

namespace {
CBLAS_TRANSPOSE toCblas(Trans t) {
  return t == Trans::kYes ? CblasTrans : CblasNoTrans;
}
}  // namespace

void sgemm(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
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
