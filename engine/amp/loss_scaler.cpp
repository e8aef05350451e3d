#include "engine/amp/loss_scaler.h"

#include <stdexcept>

namespace ranklab {

LossScaler::LossScaler(LossScalerOptions options) : options_(options), scale_(options.init_scale) {
  if (!(options.init_scale > 0) || !(options.growth_factor >= 1) ||
      !(options.backoff_factor > 0 && options.backoff_factor < 1) || options.growth_interval < 1) {
    throw std::invalid_argument(
        "LossScaler: need init_scale > 0, growth_factor >= 1, 0 < backoff_factor < 1, "
        "growth_interval >= 1");
  }
}

bool LossScaler::unscale(float* grads, size_t n, const DeviceMemory& device) const {
  return device.scaleAndCheckFinite(grads, n, 1.f / scale_);
}

bool LossScaler::update(bool overflow) {
  if (overflow) {
    scale_ *= options_.backoff_factor;
    clean_ = 0;
    ++skipped_;
    return false;
  }
  if (++clean_ == options_.growth_interval) {
    scale_ *= options_.growth_factor;
    clean_ = 0;
  }
  return true;
}

void LossScaler::restore(float scale, int clean_steps_in_a_row, int64_t skipped_steps) {
  if (!(scale > 0) || clean_steps_in_a_row < 0 || skipped_steps < 0) {
    throw std::invalid_argument("LossScaler: a restored scale must be > 0 and counters >= 0");
  }
  scale_ = scale;
  clean_ = clean_steps_in_a_row;
  skipped_ = skipped_steps;
}

}  // namespace ranklab
