#include "engine/data/batch_stream.h"

#include <algorithm>

namespace ranklab {

BatchStream::BatchStream(ShardLoader& loader, int features, int first_epoch, int64_t first_step,
                         int last_epoch, int prefetch, int64_t batches_per_epoch,
                         const PinHostFn& pin)
    : loader_(loader),
      last_epoch_(last_epoch),
      batches_per_epoch_(batches_per_epoch > 0 ? std::min(batches_per_epoch, loader.stepsPerEpoch())
                                               : loader.stepsPerEpoch()),
      slots_(static_cast<size_t>(prefetch) + 1),
      next_epoch_(first_epoch),
      next_step_(first_step) {
  for (auto& slot : slots_) {
    slot.images.resize(static_cast<size_t>(loader.batchSize()) * features);
    slot.labels.resize(static_cast<size_t>(loader.batchSize()) * loader.labelsPerSample());
    // Never resized again, so the pages stay where they were locked.
    if (pin) {
      pins_.push_back(pin(slot.images.data(), slot.images.size() * sizeof(float)));
      pins_.push_back(pin(slot.labels.data(), slot.labels.size()));
    }
  }
  // A resume point at the very end of an epoch starts with the next epoch's first batch.
  if (next_step_ >= batches_per_epoch_) at_end_ = !advance(next_epoch_, next_step_);
  if (next_epoch_ > last_epoch_) at_end_ = true;
  refill_at_ = std::max<int64_t>(1, static_cast<int64_t>(slots_.size()) - 1);
  if (prefetch > 0) producer_ = std::thread([this] { produce(); });
}

BatchStream::~BatchStream() {
  if (!producer_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  producer_.join();
}

bool BatchStream::advance(int& epoch, int64_t& step) const {
  if (++step < batches_per_epoch_) return true;
  step = 0;
  return ++epoch <= last_epoch_;
}

void BatchStream::load(Batch& slot, int epoch, int64_t step) {
  if (loaded_epoch_ != epoch) {
    loader_.startEpoch(epoch);
    loaded_epoch_ = epoch;
  }
  slot.epoch = epoch;
  slot.step = step;
  loader_.batch(step, slot.images.data(), slot.labels.data());
}

void BatchStream::produce() {
  try {
    for (bool more = !at_end_; more;) {
      {
        std::unique_lock lock(mutex_);
        if (freeSlots() == 0) {
          producer_sleeps_ = true;
          changed_.wait(lock, [&] { return stopping_ || freeSlots() >= refill_at_; });
          producer_sleeps_ = false;
        }
        if (stopping_) return;
      }
      load(slots_[produced_ % slots_.size()], next_epoch_, next_step_);
      more = advance(next_epoch_, next_step_);
      std::lock_guard lock(mutex_);
      ++produced_;
      finished_ = !more;
      if (consumer_sleeps_) changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    error_ = std::current_exception();
    finished_ = true;
    changed_.notify_all();
  }
  std::lock_guard lock(mutex_);
  finished_ = true;
  changed_.notify_all();
}

int64_t BatchStream::freeSlots() const {
  return static_cast<int64_t>(slots_.size()) - (produced_ - consumed_);
}

const Batch* BatchStream::next() {
  if (!producer_.joinable()) {  // no prefetch: load on the caller's thread
    if (at_end_) return nullptr;
    load(slots_[0], next_epoch_, next_step_);
    at_end_ = !advance(next_epoch_, next_step_);
    return &slots_[0];
  }
  std::unique_lock lock(mutex_);
  if (holding_) {
    ++consumed_;  // the caller is done with the previous batch
    holding_ = false;
    if (producer_sleeps_ && freeSlots() >= refill_at_) changed_.notify_all();
  }
  if (produced_ == consumed_ && !finished_) {
    consumer_sleeps_ = true;
    changed_.wait(lock, [&] { return produced_ > consumed_ || finished_; });
    consumer_sleeps_ = false;
  }
  if (error_) std::rethrow_exception(error_);
  if (produced_ == consumed_) return nullptr;
  holding_ = true;
  return &slots_[consumed_ % slots_.size()];
}

}  // namespace ranklab
