// The learning rate of each step as a pure function of the step number, so a run resumed
// from a checkpoint continues exactly the same schedule.
#pragma once

#include <cstdint>
#include <string>

#include "engine/job/job_spec.h"

namespace ranklab {

class LrSchedule {
 public:
  // steps_per_epoch: steps of one epoch on one rank; total_steps: the whole run's steps.
  LrSchedule(const TrainSpec& train, int64_t steps_per_epoch, int64_t total_steps);

  // step is 1-based, counted over all epochs:
  //   constant  lr
  //   step      lr * gamma^floor((epoch - 1) / lr_step_epochs)
  //   cosine    lr_min + (lr - lr_min) (1 + cos(pi (step - warmup) / (total - warmup))) / 2
  // times the linear warm-up factor step / warmup_steps during the first warmup_steps steps.
  double at(int64_t step) const;

 private:
  LrScheduleKind kind_;
  double lr_, lr_min_, gamma_;
  int64_t steps_per_decay_, warmup_, total_;
};

}  // namespace ranklab
