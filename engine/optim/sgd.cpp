#include "engine/optim/sgd.h"

namespace ranklab {

Sgd::Sgd(size_t parameters, double momentum, double weight_decay)
    : momentum_(static_cast<float>(momentum)),
      weight_decay_(static_cast<float>(weight_decay)),
      velocity_(parameters, 0.f) {}

void Sgd::step(float* params, const float* grads, double lr) {
  const float rate = static_cast<float>(lr);
  const size_t n = velocity_.size();
  for (size_t i = 0; i < n; ++i) {
    const float g = grads[i] + weight_decay_ * params[i];
    velocity_[i] = momentum_ * velocity_[i] + g;
    params[i] -= rate * velocity_[i];
  }
}

}  // namespace ranklab
