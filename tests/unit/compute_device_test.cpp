// Models reach their layers, buffers and loss head only through their compute device: a
// second device (the CPU's layers with a ledger of what was asked) sees every request, and
// the network it builds computes exactly what the CPU device's does.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/model/models.h"
#include "engine/optim/optimizer.h"
#include "kernels/gpu_probe.h"
#include "tests/support/ledger_device.h"
#include "tests/support/random_floats.h"

namespace ranklab {
namespace {

using testing::DetachedDevice;
using testing::LedgerDevice;

TEST(ComputeDevice, ModelsAskTheirDeviceForEveryLayerBufferAndHead) {
  LedgerDevice device;
  Network cnn = makeCnn({8, 8, 1}, {2}, 3, {5}, 4, 0.5f, 1, device);
  EXPECT_EQ(device.layers,
            (std::vector<std::string>{"conv0:8x8x1", "pool0:8x8x2", "relu0:4x4x2", "flatten0:4x4x2",
                                      "drop0:32", "fc0:32", "relu1:5", "drop1:5", "fc1:5"}));
  EXPECT_EQ(device.buffers, (std::vector<size_t>{cnn.parameterCount(), cnn.parameterCount()}));
  EXPECT_EQ(device.heads, 1);
  EXPECT_EQ(cnn.device().name(), "ledger");
  EXPECT_EQ(makeMlp({1, 1, 4}, {3}, 2, 0.f, 1).device().name(), "cpu");
}

TEST(ComputeDevice, TheSameLayersOnAnotherDeviceComputeTheSameGradients) {
  LedgerDevice device;
  Network on_cpu = makeMlp({1, 1, 12}, {8}, 3, 0.f, 4);
  Network on_ledger = makeMlp({1, 1, 12}, {8}, 3, 0.f, 4, device);
  std::mt19937 rng(2);
  std::normal_distribution<float> normal;
  std::vector<float> x(6 * 12);
  for (float& v : x) v = normal(rng);
  const std::vector<uint8_t> y = {0, 1, 2, 0, 1, 2};
  for (Network* model : {&on_cpu, &on_ledger}) {
    model->forward(x.data(), y.data(), 6);
    model->zeroGrads();
    model->backward(x.data(), y.data(), 6);
  }
  EXPECT_EQ(
      0, std::memcmp(on_cpu.grads(), on_ledger.grads(), on_cpu.parameterCount() * sizeof(float)));
}

// The one list of layer kinds: each has a name of its own and a CPU layer that remembers the
// request it was made from (tensor parallelism makes a slice's body again from it, by kind,
// not by its name) (the CUDA device's table is swept the same way in cuda_device_test.cpp,
// where a GPU is).
TEST(ComputeDevice, EveryLayerKindHasItsNameAndItsCpuLayer) {
  std::set<std::string> names;
  for (LayerKind kind : kLayerKinds) {
    const std::string name = layerKindName(kind);
    EXPECT_EQ(name.find("kind"), std::string::npos) << name;
    EXPECT_TRUE(names.insert(name).second) << name << " names two kinds";
    LayerRequest request{kind, name, {6, 6, 2}, 3, 3, 0.5f};
    if (kind == LayerKind::kEmbedding) request.input = {6, 1, 1}, request.vocab = 5;
    if (kind == LayerKind::kCausalSelfAttention) request.input = {6, 1, 12}, request.heads = 2;
    const std::unique_ptr<Layer> layer = cpuDevice().makeLayer(request);
    ASSERT_NE(layer, nullptr) << name;
    EXPECT_EQ(layer->name(), name);
    EXPECT_GT(layer->outputShape().size(), 0) << name;
    ASSERT_NE(layer->request(), nullptr) << name;
    EXPECT_EQ(layer->request()->kind, kind);
    EXPECT_EQ(layer->request()->input, request.input) << name;
    EXPECT_EQ(layer->request()->kernel, request.kernel) << name;
  }
  try {
    cpuDevice().makeLayer({static_cast<LayerKind>(99), "odd", {1, 1, 1}});
    FAIL() << "a layer of no listed kind was made";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kind 99"), std::string::npos) << e.what();
  }
}

using testing::normalFloats;

TEST(ComputeDevice, ANetworkOnDetachedMemoryUploadsItsInputAndKeepsActivationsThere) {
  DetachedDevice device;
  Network on_cpu = makeCnn({6, 6, 2}, {3}, 3, {5}, 4, 0.f, 7);
  Network detached = makeCnn({6, 6, 2}, {3}, 3, {5}, 4, 0.f, 7, device);
  const std::vector<float> x = normalFloats(3, 5 * 72);
  const std::vector<uint8_t> y = {0, 1, 2, 3, 0};
  const size_t buffers_before = device.buffers.size();
  BatchLoss losses[2];
  int i = 0;
  for (Network* model : {&on_cpu, &detached}) {
    losses[i++] = model->forward(x.data(), y.data(), 5);
    model->zeroGrads();
    model->backward(x.data(), y.data(), 5);
  }
  EXPECT_EQ(losses[0].loss_sum, losses[1].loss_sum);
  // The input went up once (forward), queued behind nothing the host waits for, and
  // backward used that copy, not the host batch.
  EXPECT_EQ(device.uploads.load(), 1);
  EXPECT_EQ(device.async_uploads.load(), 1);
  // Every layer's output and output gradient, and the staged input, are the device's.
  EXPECT_EQ(device.buffers.size() - buffers_before, 2 * detached.layers().size() + 1);
  EXPECT_EQ(0,
            std::memcmp(on_cpu.grads(), detached.grads(), on_cpu.parameterCount() * sizeof(float)));
  const BatchLoss eval_cpu = on_cpu.evaluate(x.data(), y.data(), 5, 2);
  const BatchLoss eval_detached = detached.evaluate(x.data(), y.data(), 5, 2);
  EXPECT_EQ(eval_cpu.loss_sum, eval_detached.loss_sum);
  EXPECT_EQ(eval_cpu.correct, eval_detached.correct);
}

TEST(ComputeDevice, AnOptimizerUpdatesAndKeepsItsStateOnTheModelsDevice) {
  LedgerDevice device;
  TrainSpec train;
  train.optimizer = OptimizerKind::kAdam;
  auto on_device = makeOptimizer(train, 10, device);
  auto on_cpu = makeOptimizer(train, 10);
  std::vector<float> p1 = normalFloats(1, 10), p2 = p1;
  const std::vector<float> g = normalFloats(2, 10);
  on_device->step(p1.data(), g.data(), 0.01);
  on_cpu->step(p2.data(), g.data(), 0.01);
  EXPECT_EQ(device.updates.load(), 1);
  EXPECT_EQ(p1, p2);
  // Its state travels through host memory, both ways.
  EXPECT_EQ(on_device->state().tensors, on_cpu->state().tensors);
  const int uploads = device.uploads;
  on_device->restore(on_cpu->state());
  EXPECT_EQ(device.uploads.load(), uploads + 2);
}

// A scatter's index past its destination is refused before anything is written, naming the
// index and the destination's length (the CUDA device refuses it alike, before its launch).
TEST(ComputeDevice, AScatterIndexOutOfRangeIsRefusedNamingItAndTheLength) {
  std::vector<float> to(5, 1.f);
  const std::vector<uint32_t> at = {0, 4, 5};
  const std::vector<float> put = {2.f, 3.f, 4.f};
  try {
    cpuDevice().scatter(to.data(), to.size(), at.data(), put.data(), at.size());
    FAIL() << "index 5 of 5 floats was not refused";
  } catch (const std::out_of_range& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("index 5 "), std::string::npos) << message;
    EXPECT_NE(message.find("of 5 floats"), std::string::npos) << message;
  }
  EXPECT_EQ(to, std::vector<float>(5, 1.f));
  cpuDevice().scatter(to.data(), to.size(), at.data(), put.data(), 2);
  EXPECT_EQ(to, (std::vector<float>{2.f, 1.f, 1.f, 1.f, 3.f}));
}

// A layer written once checks its counts for every device: more inputs than an int (the
// products' dimensions, Shape) holds are refused naming the count, before memory is touched.
TEST(ComputeDevice, ALayerOverMoreInputsThanAnIntHoldsIsRefusedNamingTheCount) {
  const Shape huge{50000, 50000, 1};  // 2,500,000,000 values
  for (LayerKind kind : {LayerKind::kLinear, LayerKind::kFlatten}) {
    try {
      cpuDevice().makeLayer({.kind = kind, .name = "big", .input = huge, .outputs = 1});
      FAIL() << layerKindName(kind) << " over " << huge.size() << " inputs was made";
    } catch (const std::length_error& e) {
      EXPECT_NE(std::string(e.what()).find("2500000000"), std::string::npos) << e.what();
    }
  }
}

// The loss head is written once, and checks its labels on the host for every device: one
// beyond the classes (which the kernels would read past the row with) is refused, named.
TEST(ComputeDevice, TheLossRefusesALabelBeyondTheClassesNamingItAndItsRow) {
  const std::unique_ptr<LossHead> head = cpuDevice().makeLossHead();
  const std::vector<float> logits(3 * 4, 0.5f);
  const std::vector<uint8_t> labels = {1, 3, 4};
  try {
    head->forward(logits.data(), labels.data(), 3, 4);
    FAIL() << "label 4 of 4 classes was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "softmax cross-entropy: label 4 of row 2 is not below the 4 classes");
  }
}

TEST(ComputeDevice, TrainDeviceNamesTheCpuOrAGpuThatIsThere) {
  EXPECT_EQ(deviceNamed("cpu").name(), "cpu");
  EXPECT_THROW(deviceNamed("gpu"), std::invalid_argument);
  EXPECT_THROW(deviceNamed("cpu", 0, {.tf32 = true}), std::invalid_argument);
  std::string why;
  if (kernels::usableGpus(&why) > 0) GTEST_SKIP() << "this machine has a GPU";
  try {
    deviceNamed("cuda", 1);
    FAIL() << "cuda without a GPU";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "train.device \"cuda\": " + why);
  }
}

}  // namespace
}  // namespace ranklab
