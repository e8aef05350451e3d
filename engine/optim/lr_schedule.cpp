#include "engine/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace ranklab {

LrSchedule::LrSchedule(const TrainSpec& train, int64_t steps_per_epoch, int64_t total_steps)
    : kind_(train.lr_schedule),
      lr_(train.lr),
      lr_min_(train.lr_min),
      gamma_(train.lr_gamma),
      steps_per_decay_(std::max<int64_t>(1, steps_per_epoch * train.lr_step_epochs)),
      warmup_(train.warmup_steps),
      total_(total_steps) {}

double LrSchedule::at(int64_t step) const {
  double lr = lr_;
  if (kind_ == LrScheduleKind::kStep) {
    lr *= std::pow(gamma_, static_cast<double>((step - 1) / steps_per_decay_));
  } else if (kind_ == LrScheduleKind::kCosine && step > warmup_ && total_ > warmup_) {
    const double progress = static_cast<double>(std::min(step, total_) - warmup_) /
                            static_cast<double>(total_ - warmup_);
    lr = lr_min_ + (lr_ - lr_min_) * (1.0 + std::cos(std::numbers::pi * progress)) / 2.0;
  }
  if (step <= warmup_) lr *= static_cast<double>(step) / static_cast<double>(warmup_);
  return lr;
}

}  // namespace ranklab
