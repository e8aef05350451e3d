#include "kernels/cpu/fp16_gemm.h"

#include <vector>

namespace ranklab::kernels {

namespace {
// Widens a (rows, cols) fp16 matrix with leading dimension ld into a packed fp32 one.
void widen(const fp16_t* src, int rows, int cols, int ld, std::vector<float>& dst) {
  dst.resize(static_cast<size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r) {
    fp16ToFloat(src + static_cast<size_t>(r) * ld, dst.data() + static_cast<size_t>(r) * cols,
                cols);
  }
}
}  // namespace

void gemmFp16(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const fp16_t* a,
              int lda, const fp16_t* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  thread_local std::vector<float> wa, wb, product;
  const bool ta = trans_a == Trans::kYes, tb = trans_b == Trans::kYes;
  widen(a, ta ? k : m, ta ? m : k, lda, wa);
  widen(b, tb ? n : k, tb ? k : n, ldb, wb);
  product.resize(static_cast<size_t>(m) * n);
  sgemm(trans_a, trans_b, m, n, k, 1.f, wa.data(), ta ? m : k, wb.data(), tb ? k : n, 0.f,
        product.data(), n);
  roundToFp16(product.data(), product.size());
  for (int i = 0; i < m; ++i) {
    float* row = c + static_cast<size_t>(i) * ldc;
    const float* p = product.data() + static_cast<size_t>(i) * n;
    if (beta == 0.f) {
      for (int j = 0; j < n; ++j) row[j] = alpha * p[j];
    } else {
      for (int j = 0; j < n; ++j) row[j] = alpha * p[j] + beta * row[j];
    }
  }
}

}  // namespace ranklab::kernels
