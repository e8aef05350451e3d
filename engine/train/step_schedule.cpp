#include "engine/train/step_schedule.h"

#include <algorithm>

#include "comm/steady_clock.h"

namespace ranklab {

PassTimes DataParallelSchedule::run(Network& model, const Batch& batch, float loss_scale,
                                    const StepHooks& hooks) {
  const int positions = model.positions();  // labels per sample
  const int size = static_cast<int>(batch.labels.size()) / positions;
  const int slices = std::clamp(microbatches_, 1, std::max(size, 1));
  const size_t features = model.inputShape().size();
  PassTimes times;
  int begin = 0;
  for (int i = 0; i < slices; ++i) {
    const int n = sliceSize(size, slices, i);
    const float* x = batch.images.data() + static_cast<size_t>(begin) * features;
    const uint8_t* y = batch.labels.data() + static_cast<size_t>(begin) * positions;
    int64_t t = steadyNowNs();
    times.loss_sum += model.forward(x, y, n).loss_sum;
    times.forward_ns += steadyNowNs() - t;
    t = steadyNowNs();
    if (i == 0) {
      if (!hooks.accumulate) model.zeroGrads();
      if (hooks.before_backward) hooks.before_backward();
    }
    // Each slice's mean loss weighted by its share: the sum is the whole batch's mean.
    model.setLossScale(loss_scale * static_cast<float>(n) / static_cast<float>(size));
    const bool last = i + 1 == slices;
    model.backward(x, y, n, last ? hooks.on_ready : GradientReadyFn{});
    times.backward_ns += steadyNowNs() - t;
    begin += n;
  }
  return times;
}

int sliceSize(int size, int slices, int index) {
  // The first size % slices slices take one more.
  return size / slices + (index < size % slices ? 1 : 0);
}

ScoredSamples StepSchedule::evaluate(Network& model, const float* x, const uint8_t* labels,
                                     int64_t n, int batch) {
  const BatchLoss part = model.evaluate(x, labels, n, batch);
  return {part.loss_sum, part.correct, n * model.positions()};
}

}  // namespace ranklab
