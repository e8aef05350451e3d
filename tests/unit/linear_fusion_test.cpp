// The fused fully connected forward (kernels::linearForward: bias and ReLU in the GEMM's
// epilogue) against a double-precision reference on every path it takes (oneDNN's matmul,
// the skinny kernels, OpenBLAS with two threads), and an MLP whose Linear layers absorb their
// ReLUs against the same layers run one by one. Tolerance: 1e-5 of the sum of the terms'
// magnitudes for a product, 1e-5 relative for losses and gradients; ReLU zeros are exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "engine/model/layers.h"
#include "engine/model/models.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/linear_forward.h"
#include "tests/support/random_floats.h"

namespace ranklab {
namespace {

using testing::normalFloats;

// Restores one BLAS thread however the test ends.
struct BlasThreads {
  explicit BlasThreads(int threads) { kernels::setBlasThreads(threads); }
  ~BlasThreads() { kernels::setBlasThreads(1); }
};

void checkLinearForward(int rows, int in, int out, bool relu) {
  const auto x = normalFloats(rows + in, static_cast<size_t>(rows) * in);
  const auto w = normalFloats(out + 1, static_cast<size_t>(out) * in);
  const auto bias = normalFloats(out + 2, out);
  std::vector<float> y(static_cast<size_t>(rows) * out, 1e30f);
  kernels::linearForward(x.data(), w.data(), bias.data(), y.data(), rows, in, out, relu);
  double worst = 0;
  for (int r = 0; r < rows; ++r) {
    for (int o = 0; o < out; ++o) {
      double sum = bias[o], magnitude = std::abs(bias[o]);
      for (int i = 0; i < in; ++i) {
        const double term = static_cast<double>(x[static_cast<size_t>(r) * in + i]) *
                            w[static_cast<size_t>(o) * in + i];
        sum += term;
        magnitude += std::abs(term);
      }
      const float got = y[static_cast<size_t>(r) * out + o];
      if (relu && sum < -1e-5 * magnitude) {
        ASSERT_EQ(got, 0.f) << "ReLU not applied at " << r << "," << o;
        continue;
      }
      const double expected = relu ? std::max(sum, 0.0) : sum;
      worst = std::max(worst, std::abs(got - expected) / magnitude);
      ASSERT_LE(std::abs(got - expected), 1e-5 * magnitude)
          << "at " << r << "," << o << ": got " << got << ", expected " << expected;
    }
  }
  std::printf("linearForward %dx%dx%d relu %d (%s, %d BLAS threads): largest error %.3g\n", rows,
              in, out, relu, kernels::sgemmLibrary(), kernels::blasThreads(), worst);
}

TEST(LinearForward, OneThreadOnednnShapesWithAndWithoutRelu) {
  BlasThreads one(1);
  for (bool relu : {false, true}) {
    checkLinearForward(37, 70, 90, relu);
    checkLinearForward(256, 784, 256, relu);  // the benchmark MLP's first layer
  }
}

TEST(LinearForward, SkinnyOutputWithAndWithoutRelu) {
  BlasThreads one(1);
  for (bool relu : {false, true}) checkLinearForward(33, 50, 10, relu);
}

TEST(LinearForward, TwoBlasThreadsWithAndWithoutRelu) {
  BlasThreads two(2);
  for (bool relu : {false, true}) checkLinearForward(37, 70, 90, relu);
}

TEST(LinearForward, RepeatsBitForBit) {
  BlasThreads one(1);
  const int rows = 64, in = 100, out = 96;
  const auto x = normalFloats(1, rows * in), w = normalFloats(2, out * in),
             bias = normalFloats(3, out);
  std::vector<float> first(rows * out), second(rows * out);
  kernels::linearForward(x.data(), w.data(), bias.data(), first.data(), rows, in, out, true);
  kernels::linearForward(x.data(), w.data(), bias.data(), second.data(), rows, in, out, true);
  EXPECT_EQ(first, second);
}

// The MLP makeMlp builds (each Linear absorbs its ReLU) and the same layers with an identity
// Dropout(p = 0) between each Linear and its ReLU, which keeps every layer separate. Both draw
// the same parameters: Dropout and ReLU have none.
Network unfusedMlp(Shape input, const std::vector<int>& hidden, int classes, uint64_t seed) {
  std::vector<std::unique_ptr<Layer>> layers;
  Shape shape = input;
  for (size_t l = 0; l < hidden.size(); ++l) {
    const std::string n = std::to_string(l);
    layers.push_back(std::make_unique<Linear>("fc" + n, shape, hidden[l]));
    shape = layers.back()->outputShape();
    layers.push_back(std::make_unique<Dropout>("drop" + n, shape, 0.f));
    layers.push_back(std::make_unique<ReLU>("relu" + n, shape));
  }
  layers.push_back(std::make_unique<Linear>("fc" + std::to_string(hidden.size()), shape, classes));
  return Network(std::move(layers), seed);
}

void expectClose(const float* a, const float* b, size_t n, const char* what) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const double diff = std::abs(static_cast<double>(a[i]) - b[i]);
    worst = std::max(worst, diff);
    ASSERT_LE(diff, 1e-5 * std::max(1.0, std::abs(static_cast<double>(b[i]))))
        << what << "[" << i << "]: fused " << a[i] << ", unfused " << b[i];
  }
  std::printf("%s: largest |fused - unfused| = %.3g over %zu values\n", what, worst, n);
}

TEST(LinearFusion, MlpEqualsItsLayersRunOneByOne) {
  BlasThreads one(1);
  const Shape input{1, 1, 100};
  const int batch = 48, classes = 10;
  Network fused = makeMlp(input, {96, 80}, classes, 0.f, 5);
  Network unfused = unfusedMlp(input, {96, 80}, classes, 5);
  ASSERT_EQ(fused.parameterCount(), unfused.parameterCount());
  ASSERT_TRUE(
      std::equal(fused.params(), fused.params() + fused.parameterCount(), unfused.params()));
  const auto x = normalFloats(9, static_cast<size_t>(batch) * input.size());
  std::vector<uint8_t> labels(batch);
  for (int i = 0; i < batch; ++i) labels[i] = static_cast<uint8_t>(i * 7 % classes);
  // Two steps: the second backward adds into the first's gradients.
  for (int step = 0; step < 2; ++step) {
    const auto a = fused.forward(x.data(), labels.data(), batch);
    const auto b = unfused.forward(x.data(), labels.data(), batch);
    EXPECT_NEAR(a.loss_sum, b.loss_sum, 1e-5 * std::abs(b.loss_sum));
    EXPECT_EQ(a.correct, b.correct);
    if (step == 0) {
      fused.zeroGrads();
      unfused.zeroGrads();
    }
    fused.backward(x.data(), labels.data(), batch);
    unfused.backward(x.data(), labels.data(), batch);
  }
  expectClose(fused.grads(), unfused.grads(), fused.parameterCount(), "mlp gradients");
}

}  // namespace
}  // namespace ranklab
