// The loss at the end of a model, apart from its layers, so that a pipeline stage can run
// forward to an activation and backward from a gradient that arrives from the next stage;
// only the last stage owns a head. The one every model ends with: softmax_cross_entropy.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ranklab {

struct BatchLoss {
  double loss_sum = 0;  // summed over the batch
  int64_t correct = 0;
};

class LossHead {
 public:
  virtual ~LossHead() = default;
  // Loss and accuracy of logits (B, classes); keeps what backward() needs.
  virtual BatchLoss forward(const float* logits, const uint8_t* labels, int batch, int classes) = 0;
  // dlogits (B, classes) = d(scale * summed loss)/d(logits) of the last forward():
  // scale = loss_scale / B for the mean loss.
  virtual void backward(float* dlogits, const uint8_t* labels, int batch, float scale) const = 0;
  // Memory it keeps from forward for backward (the probabilities), for the memory ledger.
  virtual size_t keptBytes() const { return 0; }
};

}  // namespace ranklab
