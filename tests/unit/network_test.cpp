// The network's flat buffers and views, initialization, the gradient-ready callback,
// dropout's train/eval behaviour, and the models a job file can ask for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "engine/model/models.h"
#include "kernels/cpu/elementwise.h"

namespace ranklab {
namespace {

struct Batch {
  std::vector<float> x;
  std::vector<uint8_t> y;
};

Batch randomBatch(int batch, size_t inputs, int classes, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::normal_distribution<float> normal(0.f, 1.f);
  Batch b;
  b.x.resize(batch * inputs);
  for (auto& v : b.x) v = normal(rng);
  for (int i = 0; i < batch; ++i) b.y.push_back(static_cast<uint8_t>(rng() % classes));
  return b;
}

const Shape kImage{28, 28, 1};

TEST(NetworkLayout, NamedViewsCoverTheFlatBufferInPyTorchOrder) {
  Network model = makeMlp(kImage, {256, 128}, 10, 0.f, 1);
  EXPECT_EQ(model.parameterCount(), 784u * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
  size_t next = 0;
  for (const auto& view : model.views()) {
    EXPECT_EQ(view.offset, next) << view.name;
    next += view.size;
  }
  EXPECT_EQ(next, model.parameterCount());
  std::vector<std::string> names;
  for (const auto& view : model.views()) names.push_back(view.name);
  EXPECT_EQ(names, (std::vector<std::string>{"fc0.weight", "fc0.bias", "fc1.weight", "fc1.bias",
                                             "fc2.weight", "fc2.bias"}));
}

TEST(NetworkLayout, CnnIsConvPoolConvPoolFc) {
  Network model = makeCnn(kImage, {32, 64}, 5, {}, 10, 0.25f, 1);
  EXPECT_EQ(model.describe(),
            "Conv2d(1, 32, kernel_size=5, padding=2) -> MaxPool2d(kernel_size=2, stride=2) -> "
            "ReLU() -> Conv2d(32, 64, kernel_size=5, padding=2) -> MaxPool2d(kernel_size=2, "
            "stride=2) -> ReLU() -> Flatten() -> Dropout(p=0.25) -> Linear(3136, 10)");
  EXPECT_EQ(model.parameterCount(), 32u * 25 + 32 + 64 * 32 * 25 + 64 + 3136 * 10 + 10);
  EXPECT_EQ(model.views()[2].name, "conv1.weight");
}

TEST(NetworkInit, SameSeedSameModelAndPyTorchBounds) {
  Network a = makeMlp(kImage, {256}, 10, 0.f, 42), b = makeMlp(kImage, {256}, 10, 0.f, 42),
          c = makeMlp(kImage, {256}, 10, 0.f, 43);
  EXPECT_EQ(0, std::memcmp(a.params(), b.params(), a.parameterCount() * sizeof(float)));
  EXPECT_NE(0, std::memcmp(a.params(), c.params(), a.parameterCount() * sizeof(float)));
  const float bound = 1.f / std::sqrt(784.f);
  for (size_t i = 0; i < 784u * 256; ++i) ASSERT_LE(std::abs(a.params()[i]), bound);
  Network cnn = makeCnn(kImage, {4, 8}, 5, {}, 10, 0.f, 1);
  const float conv1_bound = 1.f / std::sqrt(4.f * 25);
  const ParamView& conv1 = cnn.views()[2];
  for (size_t i = 0; i < conv1.size; ++i) {
    ASSERT_LE(std::abs(cnn.params()[conv1.offset + i]), conv1_bound);
  }
}

TEST(NetworkBackward, AddsIntoGradients) {
  Network model = makeCnn({6, 6, 1}, {2, 3}, 3, {4}, 3, 0.f, 3);
  const Batch b = randomBatch(2, 36, 3, 5);
  model.forward(b.x.data(), b.y.data(), 2);
  model.zeroGrads();
  model.backward(b.x.data(), b.y.data(), 2);
  const std::vector<float> once(model.grads(), model.grads() + model.parameterCount());
  model.backward(b.x.data(), b.y.data(), 2);
  for (size_t i = 0; i < once.size(); ++i) EXPECT_FLOAT_EQ(model.grads()[i], 2 * once[i]);
}

// zeroGrads() only marks the buffer: the next backward writes every gradient (the first
// weight-gradient GEMM with beta 0), whatever the buffer held; a reader before then sees zeros.
TEST(NetworkBackward, AfterZeroGradsWritesOverWhateverTheBufferHeld) {
  Network model = makeCnn({6, 6, 1}, {2, 3}, 3, {4}, 3, 0.f, 3);
  const Batch b = randomBatch(2, 36, 3, 5);
  const size_t n = model.parameterCount();
  model.forward(b.x.data(), b.y.data(), 2);
  std::fill(model.grads(), model.grads() + n, 0.f);
  model.backward(b.x.data(), b.y.data(), 2);  // adds into explicit zeros
  const std::vector<float> expected(model.grads(), model.grads() + n);
  std::fill(model.grads(), model.grads() + n, std::numeric_limits<float>::quiet_NaN());
  model.zeroGrads();
  model.backward(b.x.data(), b.y.data(), 2);
  EXPECT_EQ(0, std::memcmp(expected.data(), model.grads(), n * sizeof(float)));
  model.zeroGrads();
  const float* grads = model.grads();
  EXPECT_TRUE(std::all_of(grads, grads + n, [](float g) { return g == 0.f; }));
}

// The callback comes once per parameterized layer, last layer first, with slices that tile
// the buffer, and each slice is final when it is announced.
TEST(NetworkBackward, AnnouncesEachLayersGradientsWhenComplete) {
  Network model = makeCnn({8, 8, 1}, {3, 4}, 3, {6}, 5, 0.f, 9);
  const Batch b = randomBatch(4, 64, 5, 2);
  model.forward(b.x.data(), b.y.data(), 4);
  model.zeroGrads();
  std::vector<std::pair<size_t, size_t>> slices;
  std::vector<std::vector<float>> at_announcement;
  model.backward(b.x.data(), b.y.data(), 4, [&](size_t offset, size_t count) {
    slices.emplace_back(offset, count);
    at_announcement.emplace_back(model.grads() + offset, model.grads() + offset + count);
  });
  ASSERT_EQ(slices.size(), 4u);  // conv0, conv1, fc0, fc1 in reverse
  size_t end = model.parameterCount();
  for (size_t i = 0; i < slices.size(); ++i) {
    EXPECT_EQ(slices[i].first + slices[i].second, end) << "slice " << i;
    end = slices[i].first;
    const float* final_grads = model.grads() + slices[i].first;
    EXPECT_EQ(
        0, std::memcmp(at_announcement[i].data(), final_grads, slices[i].second * sizeof(float)));
  }
  EXPECT_EQ(end, 0u);
}

TEST(NetworkDropout, TrainingMasksDifferPerPassAndRankEvaluationDoesNot) {
  Network model = makeMlp({1, 1, 20}, {64}, 4, 0.5f, 1);
  const Batch b = randomBatch(8, 20, 4, 3);
  const double first = model.forward(b.x.data(), b.y.data(), 8).loss_sum;
  const double second = model.forward(b.x.data(), b.y.data(), 8).loss_sum;
  EXPECT_NE(first, second);  // a new mask for every training pass
  model.setTrainingPasses(0);
  EXPECT_EQ(model.forward(b.x.data(), b.y.data(), 8).loss_sum, first);  // reproducible
  model.setDropoutStream(1, 1);
  model.setTrainingPasses(0);
  EXPECT_NE(model.forward(b.x.data(), b.y.data(), 8).loss_sum, first);  // another rank's mask
  const double eval_a = model.evaluate(b.x.data(), b.y.data(), 8, 8).loss_sum;
  const double eval_b = model.evaluate(b.x.data(), b.y.data(), 8, 3).loss_sum;
  EXPECT_NEAR(eval_a, eval_b, 1e-5);
  Network plain = makeMlp({1, 1, 20}, {64}, 4, 0.f, 1);
  EXPECT_NEAR(plain.evaluate(b.x.data(), b.y.data(), 8, 8).loss_sum, eval_a, 1e-5);
}

TEST(NetworkDropout, MaskKeepsAboutOneMinusPScaledByItsInverse) {
  std::vector<float> scale(100000);
  kernels::dropoutMask(12345, 0.3f, scale.data(), scale.size());
  size_t kept = 0;
  for (float s : scale) {
    ASSERT_TRUE(s == 0.f || s == 1.f / 0.7f) << s;
    kept += s != 0.f;
  }
  EXPECT_NEAR(static_cast<double>(kept) / scale.size(), 0.7, 0.01);
}

TEST(Models, FromTheJobsModelSection) {
  ModelSpec spec;
  spec.kind = ModelKind::kCnn;
  spec.channels = {4, 8};
  spec.kernel_size = 3;
  spec.layers = {32};
  Network cnn = makeModel(spec, kImage, 10, 1);
  EXPECT_EQ(cnn.views().size(), 8u);
  spec.kind = ModelKind::kMlp;
  Network mlp = makeModel(spec, kImage, 10, 1);
  EXPECT_EQ(mlp.views().front().size, 784u * 32);
  spec.kind = ModelKind::kCnn;
  try {
    makeModel(spec, {1, 1, 2}, 3, 1);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs image data"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ranklab
