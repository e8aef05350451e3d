// CUDA kernels give the CPU kernels' answers; skipped with the reason where no GPU is present.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/gpu_probe.h"
#include "tests/support/random_floats.h"

namespace ranklab {
namespace {

class CudaKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (kernels::usableGpus(&why) == 0) GTEST_SKIP() << "CUDA tests skipped: " << why;
  }
};

using testing::normalFloats;

TEST_F(CudaKernels, SgemmMatchesOpenBlasForEveryTransposition) {
  const int m = 37, n = 29, k = 53;
  for (auto ta : {kernels::Trans::kNo, kernels::Trans::kYes}) {
    for (auto tb : {kernels::Trans::kNo, kernels::Trans::kYes}) {
      const auto a = normalFloats(1, m * k), b = normalFloats(2, k * n);
      const int lda = ta == kernels::Trans::kNo ? k : m;
      const int ldb = tb == kernels::Trans::kNo ? n : k;
      std::vector<float> expected(m * n, 0.f), got(m * n, 0.f);
      kernels::sgemm(ta, tb, m, n, k, 1.f, a.data(), lda, b.data(), ldb, 0.f, expected.data(), n);
      cuda::DeviceBuffer da(a.size()), db(b.size()), dc(got.size());
      da.upload(a.data());
      db.upload(b.data());
      dc.upload(got.data());
      cuda::sgemm(ta, tb, m, n, k, 1.f, da.data(), lda, db.data(), ldb, 0.f, dc.data(), n);
      dc.download(got.data());
      double worst = 0;
      for (size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, double(std::abs(got[i] - expected[i])));
      std::printf("sgemm trans %d%d: largest |cuBLAS - OpenBLAS| = %.3g\n", int(ta), int(tb),
                  worst);
      EXPECT_LE(worst, 1e-3);
    }
  }
}

TEST_F(CudaKernels, ReluAndBiasMatchTheCpu) {
  const int rows = 7, cols = 13;
  auto y = normalFloats(3, rows * cols);
  const auto bias = normalFloats(4, cols);
  auto expected = y;
  kernels::addBiasRows(expected.data(), bias.data(), rows, cols);
  kernels::reluForward(expected.data(), expected.data(), expected.size());
  cuda::DeviceBuffer dy(y.size()), dbias(bias.size());
  dy.upload(y.data());
  dbias.upload(bias.data());
  cuda::addBiasRows(dy.data(), dbias.data(), rows, cols);
  cuda::reluForward(dy.data(), y.size());
  cuda::synchronize();
  dy.download(y.data());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_FLOAT_EQ(y[i], expected[i]) << i;
}

}  // namespace
}  // namespace ranklab
