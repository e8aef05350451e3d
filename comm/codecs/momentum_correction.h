// DGC's momentum correction (Lin et al. 2018) on one rank's gradient: the momentum is
// applied before compression (the optimizer then runs without it), and sparse codecs clear
// the velocity of the elements they sent (momentum factor masking), so an element that
// waited in the residual is not pushed again for many steps once it goes.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace ranklab {

class MomentumCorrection {
 public:
  explicit MomentumCorrection(float momentum) : momentum_(momentum) {}

  // data = velocity = momentum * velocity + data (the velocity starts as n zeros).
  void accumulate(float* data, size_t n);
  // velocity_i = 0 where sent_i != 0.
  void maskSent(const float* sent, size_t n);

  // For checkpoints.
  const std::vector<float>& velocity() const { return velocity_; }
  void restoreVelocity(std::vector<float> velocity) { velocity_ = std::move(velocity); }

 private:
  float momentum_;
  std::vector<float> velocity_;
};

}  // namespace ranklab
