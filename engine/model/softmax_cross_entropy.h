// Softmax cross-entropy, written once over its device's passes (device_layer_ops.h): logits
// and their gradient are the device's memory, labels the host's bytes, checked against the
// classes on the host and uploaded into a buffer the head keeps.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/model/compute_device.h"
#include "engine/model/device_scratch.h"
#include "engine/model/loss_head.h"

namespace ranklab {

class SoftmaxCrossEntropy : public LossHead {
 public:
  explicit SoftmaxCrossEntropy(const ComputeDevice& device = cpuDevice());
  BatchLoss forward(const float* logits, const uint8_t* labels, int batch, int classes) override;
  void backward(float* dlogits, const uint8_t* labels, int batch, float scale) const override;
  size_t keptBytes() const override { return probs_.usedBytes(); }

 private:
  // The labels on the device, each first checked to be below the classes (std::invalid_argument
  // naming the label and its row otherwise).
  const uint8_t* uploadLabels(const uint8_t* labels, int batch, int classes) const;

  const ComputeDevice& device_;
  int classes_ = 0;
  DeviceScratch probs_;      // (B, classes)
  DeviceScratch workspace_;  // the device's per-row values and totals
  mutable DeviceScratch labels_;
};

}  // namespace ranklab
