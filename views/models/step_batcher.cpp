#include "views/models/step_batcher.h"

namespace ranklab {

StepBatcher::StepBatcher(QObject* parent) : QObject(parent) {
  timer_.setSingleShot(true);
  timer_.setInterval(kIntervalMs);
  connect(&timer_, &QTimer::timeout, this, &StepBatcher::flush);
}

void StepBatcher::add(const StepRow& step) {
  pending_.push_back(step);
  if (!timer_.isActive()) timer_.start();  // the first step of a batch starts the clock
}

void StepBatcher::addAll(const std::vector<StepRow>& steps) {
  pending_.insert(pending_.end(), steps.begin(), steps.end());
  if (!pending_.empty() && !timer_.isActive()) timer_.start();
}

void StepBatcher::flush() {
  timer_.stop();
  if (pending_.empty()) return;
  std::vector<StepRow> batch;
  batch.swap(pending_);
  emit batchReady(batch);
}

}  // namespace ranklab
