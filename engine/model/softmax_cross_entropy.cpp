#include "engine/model/softmax_cross_entropy.h"

#include <stdexcept>
#include <string>

namespace ranklab {

SoftmaxCrossEntropy::SoftmaxCrossEntropy(const ComputeDevice& device)
    : device_(device), probs_(device), workspace_(device), labels_(device) {}

const uint8_t* SoftmaxCrossEntropy::uploadLabels(const uint8_t* labels, int batch,
                                                 int classes) const {
  for (int r = 0; r < batch; ++r) {
    if (labels[r] >= classes) {
      throw std::invalid_argument("softmax cross-entropy: label " + std::to_string(labels[r]) +
                                  " of row " + std::to_string(r) + " is not below the " +
                                  std::to_string(classes) + " classes");
    }
  }
  uint8_t* on_device = labels_.ensure<uint8_t>(batch);
  device_.uploadBytes(on_device, labels, batch);
  return on_device;
}

BatchLoss SoftmaxCrossEntropy::forward(const float* logits, const uint8_t* labels, int batch,
                                       int classes) {
  classes_ = classes;
  const uint8_t* on_device = uploadLabels(labels, batch, classes);
  float* probs = probs_.ensure<float>(static_cast<size_t>(batch) * classes);
  const size_t workspace_bytes = device_.softmaxXentWorkspaceBytes(batch);
  void* workspace = workspace_bytes > 0 ? workspace_.ensure<uint8_t>(workspace_bytes) : nullptr;
  return device_.softmaxXentForward(logits, on_device, probs, batch, classes, workspace);
}

void SoftmaxCrossEntropy::backward(float* dlogits, const uint8_t* labels, int batch,
                                   float scale) const {
  if (classes_ == 0) {
    throw std::logic_error("softmax cross-entropy: backward() before any forward()");
  }
  // (softmax - onehot) * scale
  device_.softmaxXentBackward(dlogits, probs_.data<float>(), uploadLabels(labels, batch, classes_),
                              batch, classes_, scale);
}

}  // namespace ranklab
