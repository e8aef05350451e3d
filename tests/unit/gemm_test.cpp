// kernels::sgemm against a double-precision reference (error relative to the sum of the
// terms' magnitudes, at most 1e-6), for every transposition (oneDNN with one thread when
// built with it, OpenBLAS otherwise) and for the narrow and short shapes it computes itself (N <=
// 64 for A.B^T and A^T.B; N <= 64 or K <= 64 for A.B), with ragged sizes, strides and beta.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/model/layers.h"
#include "engine/model/models.h"
#include "kernels/cpu/gemm.h"

namespace ranklab {
namespace {

using kernels::Trans;

struct Case {
  Trans ta, tb;
  int m, n, k;
  float beta;
  int pad;  // extra columns in every leading dimension
};

using SgemmFn = decltype(&kernels::sgemm);

void checkAgainstReference(const Case& c, SgemmFn sgemm = kernels::sgemm) {
  std::mt19937 rng(c.m * 131 + c.n * 17 + c.k);
  std::normal_distribution<float> normal;
  const int a_rows = c.ta == Trans::kNo ? c.m : c.k, a_cols = c.ta == Trans::kNo ? c.k : c.m;
  const int b_rows = c.tb == Trans::kNo ? c.k : c.n, b_cols = c.tb == Trans::kNo ? c.n : c.k;
  const int lda = a_cols + c.pad, ldb = b_cols + c.pad, ldc = c.n + c.pad;
  std::vector<float> a(static_cast<size_t>(a_rows) * lda), b(static_cast<size_t>(b_rows) * ldb),
      out(static_cast<size_t>(c.m) * ldc);
  for (auto* v : {&a, &b, &out}) {
    for (auto& x : *v) x = normal(rng);
  }
  const std::vector<float> before = out;
  const float alpha = 0.75f;
  sgemm(c.ta, c.tb, c.m, c.n, c.k, alpha, a.data(), lda, b.data(), ldb, c.beta, out.data(), ldc);
  double worst = 0;
  for (int i = 0; i < c.m; ++i) {
    for (int j = 0; j < ldc; ++j) {
      const float got = out[static_cast<size_t>(i) * ldc + j];
      if (j >= c.n) {  // the padding between rows is left alone
        ASSERT_EQ(got, before[static_cast<size_t>(i) * ldc + j]) << "padding at " << i << "," << j;
        continue;
      }
      double sum = 0, magnitude = 0;
      for (int p = 0; p < c.k; ++p) {
        const float av = c.ta == Trans::kNo ? a[static_cast<size_t>(i) * lda + p]
                                            : a[static_cast<size_t>(p) * lda + i];
        const float bv = c.tb == Trans::kNo ? b[static_cast<size_t>(p) * ldb + j]
                                            : b[static_cast<size_t>(j) * ldb + p];
        sum += static_cast<double>(av) * bv;
        magnitude += std::abs(static_cast<double>(av) * bv);
      }
      const double expected =
          alpha * sum + (c.beta != 0.f ? c.beta * before[static_cast<size_t>(i) * ldc + j] : 0.0);
      // Float sums of k terms in any order: error up to about k * 6e-8 of the terms' sizes.
      const double scale = alpha * magnitude + std::abs(c.beta) + 1.0;
      worst = std::max(worst, std::abs(expected - got) / scale);
    }
  }
  EXPECT_LE(worst, 1e-6) << "m " << c.m << " n " << c.n << " k " << c.k << " beta " << c.beta
                         << " pad " << c.pad;
}

// The skinny kernels serve single-threaded calls; with more BLAS threads OpenBLAS does.
class Sgemm : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    saved_ = kernels::blasThreads();
    kernels::setBlasThreads(GetParam());
  }
  void TearDown() override { kernels::setBlasThreads(saved_); }
  int saved_ = 1;
};

INSTANTIATE_TEST_SUITE_P(BlasThreads, Sgemm, ::testing::Values(1, 2));

TEST_P(Sgemm, SkinnyShapesMatchTheReference) {
  for (int m : {1, 7, 8, 9, 33, 200}) {
    for (int n : {1, 10, 16, 17, 25, 32, 64}) {
      for (int k : {1, 9, 25, 32, 400}) {
        for (float beta : {0.f, 1.f}) {
          for (int pad : {0, 3}) {
            checkAgainstReference({Trans::kNo, Trans::kYes, m, n, k, beta, pad});
          }
        }
      }
    }
  }
  for (int m : {1, 7, 8, 16, 33, 64, 400}) {
    for (int n : {1, 9, 16, 17, 25, 32, 48, 64}) {
      for (int k : {1, 2, 5, 300}) {
        for (float beta : {0.f, 1.f}) {
          for (int pad : {0, 3}) {
            checkAgainstReference({Trans::kYes, Trans::kNo, m, n, k, beta, pad});
          }
        }
      }
    }
  }
}

TEST_P(Sgemm, NarrowOrShortPlainProductsMatchTheReference) {
  for (int m : {1, 6, 7, 13, 100}) {
    for (int n : {1, 10, 16, 31, 48, 64, 65, 200, 400}) {
      for (int k : {1, 25, 32, 64, 65, 400}) {
        if (n > 64 && k > 64) continue;  // the wide shapes, covered below
        for (float beta : {0.f, 1.f}) {
          for (int pad : {0, 3})
            checkAgainstReference({Trans::kNo, Trans::kNo, m, n, k, beta, pad});
        }
      }
    }
  }
}

TEST_P(Sgemm, EveryTranspositionOfTheWideShapes) {
  for (Trans ta : {Trans::kNo, Trans::kYes}) {
    for (Trans tb : {Trans::kNo, Trans::kYes}) {
      checkAgainstReference({ta, tb, 70, 90, 110, 0.f, 0});
      checkAgainstReference({ta, tb, 33, 65, 129, 1.f, 5});
    }
  }
}

// beta 0 must not read C: Network's lazy zeroGrads() leaves whatever the last step held there.
TEST_P(Sgemm, BetaZeroIgnoresWhatCHeld) {
  const int m = 40, n = 300, k = 70;  // beyond the skinny kernels: oneDNN or OpenBLAS
  for (Trans ta : {Trans::kNo, Trans::kYes}) {
    for (Trans tb : {Trans::kNo, Trans::kYes}) {
      std::vector<float> a(static_cast<size_t>(m) * k, 0.5f), b(static_cast<size_t>(k) * n, 2.f);
      std::vector<float> c(static_cast<size_t>(m) * n, std::numeric_limits<float>::quiet_NaN());
      kernels::sgemm(ta, tb, m, n, k, 1.f, a.data(), ta == Trans::kNo ? k : m, b.data(),
                     tb == Trans::kNo ? n : k, 0.f, c.data(), n);
      for (float v : c) ASSERT_EQ(v, static_cast<float>(k));
    }
  }
}

// The library sgemm() hands the wide shapes to, and OpenBLAS called directly, both right.
TEST_P(Sgemm, OpenBlasDirectlyMatchesTheReference) {
  const std::string library = kernels::sgemmLibrary();
  EXPECT_TRUE(library == "oneDNN" || library == "OpenBLAS") << library;
  // One pool of compute threads: the library does not change with the thread count.
  kernels::setBlasThreads(1);
  EXPECT_EQ(kernels::sgemmLibrary(), library);
  kernels::setBlasThreads(GetParam());
  checkAgainstReference({Trans::kYes, Trans::kYes, 70, 90, 110, 0.f, 2}, kernels::sgemmOpenBlas);
  checkAgainstReference({Trans::kNo, Trans::kYes, 33, 65, 129, 1.f, 5}, kernels::sgemmOpenBlas);
}

// The kernel each GEMM of the benchmark models takes (batch 64), as bench_kernel_choice's
// table prints it: "layer: forward weight-grad input-grad". A choice, not a time: a change
// here must come with the bench's rates that justify it. The tiles are sized per instruction
// set, so the choice is the same for each.
std::string choices(const Network& net, int threads) {
  std::string said;
  for (const auto& layer : net.layers()) {
    const auto* weighted = dynamic_cast<const WeightedLayer*>(layer.get());
    if (!weighted) continue;
    said += (said.empty() ? "" : "; ") + layer->name() + ":";
    for (const kernels::GemmShape& p : weighted->gemms(64)) {
      said += std::string(" ") + kernels::gemmKernelName(kernels::chooseSgemmKernel(
                                     p.trans_a, p.trans_b, p.m, p.n, p.k, threads, true));
    }
  }
  return said;
}

TEST(SgemmKernelChoice, EachLayerOfTheBenchmarkModelsTakesTheTablesKernel) {
  const Shape image{28, 28, 1};
  const Network mlp = makeMlp(image, {256, 128}, 10, 0.f, 1);
  const Network cnn = makeCnn(image, {16, 32}, 5, {}, 10, 0.f, 1);
  const Network wide = makeCnn(image, {32, 64}, 5, {256, 128}, 10, 0.f, 1);
  EXPECT_EQ(choices(mlp, 1),
            "fc0: oneDNN oneDNN oneDNN; fc1: oneDNN oneDNN oneDNN; fc2: skinny oneDNN skinny");
  EXPECT_EQ(choices(cnn, 1),
            "conv0: skinny skinny skinny; conv1: skinny skinny skinny; fc0: skinny oneDNN skinny");
  EXPECT_EQ(choices(wide, 1),
            "conv0: skinny skinny skinny; conv1: skinny skinny skinny; fc0: oneDNN oneDNN oneDNN; "
            "fc1: oneDNN oneDNN oneDNN; fc2: skinny oneDNN skinny");
  // More threads: every product on oneDNN's one OpenMP team.
  EXPECT_EQ(choices(cnn, 2),
            "conv0: oneDNN oneDNN oneDNN; conv1: oneDNN oneDNN oneDNN; fc0: oneDNN oneDNN oneDNN");
  // No oneDNN: OpenBLAS keeps what the skinny kernels leave.
  EXPECT_EQ(kernels::chooseSgemmKernel(Trans::kNo, Trans::kYes, 64, 256, 784, 1, false),
            kernels::GemmKernel::kOpenBlas);
  // Nothing to sum over (k = 0): C = beta C, which OpenBLAS does.
  EXPECT_EQ(kernels::chooseSgemmKernel(Trans::kNo, Trans::kNo, 64, 10, 0, 1, true),
            kernels::GemmKernel::kOpenBlas);
}

}  // namespace
}  // namespace ranklab
