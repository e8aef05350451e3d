#include "comm/codecs/momentum_correction.h"

namespace ranklab {

void MomentumCorrection::accumulate(float* data, size_t n) {
  velocity_.resize(n, 0.f);
  for (size_t i = 0; i < n; ++i) data[i] = velocity_[i] = momentum_ * velocity_[i] + data[i];
}

void MomentumCorrection::maskSent(const float* sent, size_t n) {
  for (size_t i = 0; i < n; ++i) velocity_[i] = sent[i] != 0.f ? 0.f : velocity_[i];
}

}  // namespace ranklab
