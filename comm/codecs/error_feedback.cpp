#include "comm/codecs/error_feedback.h"

namespace ranklab {

void ErrorFeedback::compensate(float* g, size_t n) {
  residual_.resize(n, 0.f);
  for (size_t i = 0; i < n; ++i) g[i] += residual_[i];
}

void ErrorFeedback::update(const float* compensated, const float* sent, size_t n) {
  residual_.resize(n);
  for (size_t i = 0; i < n; ++i) residual_[i] = compensated[i] - sent[i];
}

}  // namespace ranklab
