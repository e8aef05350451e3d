// Models reach their layers, buffers and loss head only through their compute device: a
// second device (the CPU's layers with a ledger of what was asked) sees every request, and
// the network it builds computes exactly what the CPU device's does.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/model/models.h"

namespace ranklab {
namespace {

class LedgerDevice : public ComputeDevice {
 public:
  std::string name() const override { return "ledger"; }
  std::unique_ptr<Layer> makeLayer(const LayerRequest& request) const override {
    layers.push_back(request.name + ":" + request.input.str());
    return cpuDevice().makeLayer(request);
  }
  std::unique_ptr<LossHead> makeLossHead() const override {
    ++heads;
    return cpuDevice().makeLossHead();
  }
  std::unique_ptr<DeviceBuffer> allocate(size_t floats) const override {
    buffers.push_back(floats);
    return cpuDevice().allocate(floats);
  }
  mutable std::vector<std::string> layers;
  mutable std::vector<size_t> buffers;
  mutable int heads = 0;
};

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

}  // namespace
}  // namespace ranklab
