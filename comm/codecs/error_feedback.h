// Error feedback (Seide et al. 2014; Karimireddy et al. 2019): what a lossy codec did not
// send this step is kept and added to the next step's gradient, so it is delayed, not
// lost. Over any number of steps: sum(sent) + residual == sum(raw gradients).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace ranklab {

class ErrorFeedback {
 public:
  // g += residual (the residual starts as n zeros).
  void compensate(float* g, size_t n);
  // residual = compensated - sent: what this step's payload left out.
  void update(const float* compensated, const float* sent, size_t n);

  const std::vector<float>& residual() const { return residual_; }
  // From a checkpoint.
  void restoreResidual(std::vector<float> residual) { residual_ = std::move(residual); }

 private:
  std::vector<float> residual_;
};

}  // namespace ranklab
