// bf16 and fp16 GEMMs against fp32 references on the same (rounded) inputs, for every
// transpose combination, alpha/beta, leading dimensions and the MLP's shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/cpu/bf16_gemm.h"
#include "kernels/cpu/fp16_gemm.h"

namespace ranklab::kernels {
namespace {

struct Case {
  Trans ta, tb;
  int m, n, k;
  float alpha, beta;
};

// Reference: double accumulation over the widened bf16 inputs.
void reference(const Case& c, const std::vector<float>& a, int lda, const std::vector<float>& b,
               int ldb, std::vector<float>& out, int ldc) {
  for (int i = 0; i < c.m; ++i) {
    for (int j = 0; j < c.n; ++j) {
      double sum = 0;
      for (int p = 0; p < c.k; ++p) {
        const float av = c.ta == Trans::kYes ? a[p * lda + i] : a[i * lda + p];
        const float bv = c.tb == Trans::kYes ? b[j * ldb + p] : b[p * ldb + j];
        sum += double(av) * bv;
      }
      float& dst = out[i * ldc + j];
      dst = static_cast<float>(c.alpha * sum + c.beta * dst);
    }
  }
}

double runCase(const Case& c, bool portable) {
  std::mt19937 rng(c.m * 31 + c.n * 7 + c.k);
  std::normal_distribution<float> normal(0.f, 1.f);
  const int a_rows = c.ta == Trans::kYes ? c.k : c.m, a_cols = c.ta == Trans::kYes ? c.m : c.k;
  const int b_rows = c.tb == Trans::kYes ? c.n : c.k, b_cols = c.tb == Trans::kYes ? c.k : c.n;
  const int lda = a_cols + 3, ldb = b_cols + 1, ldc = c.n + 2;  // padded rows
  std::vector<bf16_t> a(size_t(a_rows) * lda), b(size_t(b_rows) * ldb);
  std::vector<float> af(a.size()), bf(b.size());
  for (size_t i = 0; i < a.size(); ++i) af[i] = bf16ToFloat(a[i] = floatToBf16(normal(rng)));
  for (size_t i = 0; i < b.size(); ++i) bf[i] = bf16ToFloat(b[i] = floatToBf16(normal(rng)));
  std::vector<float> out(size_t(c.m) * ldc), expected;
  for (auto& v : out) v = normal(rng);
  expected = out;
  reference(c, af, lda, bf, ldb, expected, ldc);
  (portable ? gemmBf16Portable : gemmBf16)(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), lda,
                                           b.data(), ldb, c.beta, out.data(), ldc);
  double worst = 0;
  for (int i = 0; i < c.m; ++i) {
    for (int j = 0; j < c.n; ++j) {
      worst = std::max(worst, double(std::fabs(out[i * ldc + j] - expected[i * ldc + j])));
    }
  }
  return worst;
}

TEST(Bf16Gemm, MatchesTheFp32ReferenceOnBf16Inputs) {
  std::printf("bf16 GEMM backend: %s\n", bf16GemmBackend().c_str());
  const Trans no = Trans::kNo, yes = Trans::kYes;
  const std::vector<Case> cases = {
      {no, yes, 64, 256, 784, 1.f, 0.f},  // MLP forward: x . W^T
      {yes, no, 256, 784, 64, 1.f, 1.f},  // MLP dW += delta^T . x
      {no, no, 64, 784, 256, 1.f, 0.f},   // MLP dx = delta . W
      {yes, yes, 17, 5, 33, 0.5f, 2.f},  {no, no, 1, 1, 1, 1.f, 0.f},
      {no, no, 3, 7, 0, 1.f, 0.5f},  // k = 0: C = beta C
  };
  for (const auto& c : cases) {
    for (bool portable : {false, true}) {
      const double worst = runCase(c, portable);
      // fp32 accumulation of k products of N(0,1) values: error grows like sqrt(k) ulps.
      const double tolerance = 1e-5 * std::sqrt(double(std::max(c.k, 1))) * 8;
      std::printf("  %s m %d n %d k %d ta %d tb %d: largest difference %.3g\n",
                  portable ? "portable" : "default ", c.m, c.n, c.k, c.ta == yes, c.tb == yes,
                  worst);
      EXPECT_LE(worst, tolerance) << "m " << c.m << " n " << c.n << " k " << c.k;
    }
  }
}

// fp16: the same shapes against double sums of the fp16 inputs, each result within fp16's
// rounding; a product beyond 65504 comes out as inf.
TEST(Fp16Gemm, RoundsTheResultToFp16AndOverflowsToInf) {
  const int m = 64, n = 256, k = 784;
  std::mt19937 rng(4);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<fp16_t> a(size_t(m) * k), b(size_t(n) * k);
  std::vector<float> af(a.size()), bf(b.size());
  for (size_t i = 0; i < a.size(); ++i) af[i] = fp16ToFloat(a[i] = floatToFp16(normal(rng)));
  for (size_t i = 0; i < b.size(); ++i) bf[i] = fp16ToFloat(b[i] = floatToFp16(normal(rng)));
  std::vector<float> c(size_t(m) * n, 1.f);
  gemmFp16(Trans::kNo, Trans::kYes, m, n, k, 1.f, a.data(), k, b.data(), k, 1.f, c.data(), n);
  double worst = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p) sum += double(af[i * k + p]) * bf[j * k + p];
      // fp16 rounding of the product (2^-11 relative) plus fp32 summation error.
      const double tolerance = std::ldexp(std::fabs(sum), -11) + 1e-4;
      worst = std::max(worst, std::fabs(c[i * n + j] - (sum + 1.0)) / tolerance);
    }
  }
  EXPECT_LE(worst, 1.0) << "largest difference in units of the tolerance";
  const fp16_t big = floatToFp16(300.f);
  float out = 0;
  gemmFp16(Trans::kNo, Trans::kNo, 1, 1, 1, 1.f, &big, 1, &big, 1, 0.f, &out, 1);
  EXPECT_TRUE(std::isinf(out)) << "300 * 300 = 90000 > 65504";
}

}  // namespace
}  // namespace ranklab::kernels
