// The CPU device: the layers of engine/model/layers.h and host vectors.
#include <stdexcept>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/model/layers.h"

namespace ranklab {
namespace {

class HostBuffer : public DeviceBuffer {
 public:
  explicit HostBuffer(size_t floats) : values_(floats, 0.f) {}
  float* data() override { return values_.data(); }
  size_t size() const override { return values_.size(); }

 private:
  std::vector<float> values_;
};

class CpuDevice : public ComputeDevice {
 public:
  std::string name() const override { return "cpu"; }

  std::unique_ptr<Layer> makeLayer(const LayerRequest& r) const override {
    switch (r.kind) {
      case LayerKind::kLinear:
        return std::make_unique<Linear>(r.name, r.input, r.outputs, r.adds_bias);
      case LayerKind::kConv2d:
        return std::make_unique<Conv2d>(r.name, r.input, r.outputs, r.kernel);
      case LayerKind::kMaxPool2d:
        return std::make_unique<MaxPool2d>(r.name, r.input);
      case LayerKind::kReLU:
        return std::make_unique<ReLU>(r.name, r.input);
      case LayerKind::kDropout:
        return std::make_unique<Dropout>(r.name, r.input, r.dropout);
      case LayerKind::kFlatten:
        return std::make_unique<Flatten>(r.name, r.input);
    }
    throw std::invalid_argument("cpu device: no layer of kind " +
                                std::to_string(static_cast<int>(r.kind)));
  }

  std::unique_ptr<LossHead> makeLossHead() const override {
    return std::make_unique<SoftmaxCrossEntropy>();
  }

  std::unique_ptr<DeviceBuffer> allocate(size_t floats) const override {
    return std::make_unique<HostBuffer>(floats);
  }
};

}  // namespace

const ComputeDevice& cpuDevice() {
  static const CpuDevice device;
  return device;
}

}  // namespace ranklab
