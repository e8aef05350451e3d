// Dynamic loss scaling with PyTorch GradScaler's rule and defaults. The loss (and so every
// gradient) is multiplied by scale() before backward, so small fp16 gradients do not
// flush to zero; unscale() divides them back and says whether any became inf/NaN. A step
// with an overflow is skipped and the scale halves; after growth_interval clean steps in
// a row it doubles.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/model/compute_device.h"

namespace ranklab {

struct LossScalerOptions {
  float init_scale = 65536.f;  // 2^16
  float growth_factor = 2.f;
  float backoff_factor = 0.5f;
  int growth_interval = 2000;
};

class LossScaler {
 public:
  explicit LossScaler(LossScalerOptions options = {});

  float scale() const { return scale_; }

  // grads /= scale() in place, on the device that holds them; false when any gradient is
  // inf or NaN (on this rank).
  bool unscale(float* grads, size_t n, const DeviceMemory& device = cpuDevice()) const;

  // Takes the step's overflow verdict (agreed by every rank) and moves the scale.
  // Returns true when the optimizer should apply this step's update.
  bool update(bool overflow);

  int64_t skippedSteps() const { return skipped_; }
  int cleanStepsInARow() const { return clean_; }

  // Continues from a checkpointed scale and counters.
  void restore(float scale, int clean_steps_in_a_row, int64_t skipped_steps);

 private:
  LossScalerOptions options_;
  float scale_;
  int clean_ = 0;
  int64_t skipped_ = 0;
};

}  // namespace ranklab
