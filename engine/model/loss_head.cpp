#include "engine/model/loss_head.h"

#include "kernels/cpu/elementwise.h"

namespace ranklab {

BatchLoss SoftmaxCrossEntropy::forward(const float* logits, const uint8_t* labels, int batch,
                                       int classes) {
  classes_ = classes;
  const size_t needed = static_cast<size_t>(batch) * classes;
  if (probs_.size() < needed) probs_.resize(needed);
  const auto result = kernels::softmaxXentForward(logits, labels, probs_.data(), batch, classes);
  return {result.loss_sum, result.correct};
}

void SoftmaxCrossEntropy::backward(float* dlogits, const uint8_t* labels, int batch,
                                   float scale) const {
  // (softmax - onehot) * scale
  kernels::softmaxXentBackward(dlogits, probs_.data(), labels, batch, classes_, scale);
}

}  // namespace ranklab
