// The training batches of a run, in order, from a ShardLoader: epoch by epoch, starting at
// any step (to resume). With prefetch > 0 a background thread loads up to that many batches
// ahead while the current step computes; the batches are exactly the loader's either way,
// so prefetching never changes a result.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/data/shard_loader.h"

namespace ranklab {

struct Batch {
  int epoch = 0;                // 1-based
  int64_t step = 0;             // 0-based step within the epoch
  std::vector<float> images;    // (B, features)
  std::vector<uint8_t> labels;  // (B, labels per sample)
};

// Makes `bytes` of host memory at `data` page-locked for a device's asynchronous copies
// (ComputeDevice::pinHost); it stays so while what it returns lives. Null: left as it is.
using PinHostFn = std::function<std::shared_ptr<void>(void* data, size_t bytes)>;

class BatchStream {
 public:
  // Batches of epochs first_epoch..last_epoch, beginning at step first_step of first_epoch.
  // The stream owns the loader's epoch state from here on. batches_per_epoch > 0 uses only
  // the first that many of each epoch's batches (whole accumulated steps). `pin`, when
  // given, is asked once for each buffer a batch is loaded into, before any is loaded.
  BatchStream(ShardLoader& loader, int features, int first_epoch, int64_t first_step,
              int last_epoch, int prefetch, int64_t batches_per_epoch = 0,
              const PinHostFn& pin = {});
  ~BatchStream();
  BatchStream(const BatchStream&) = delete;
  BatchStream& operator=(const BatchStream&) = delete;

  // The next batch, waiting for it if it is still loading; valid until the next call.
  // Returns nullptr after the last one.
  const Batch* next();

 private:
  bool advance(int& epoch, int64_t& step) const;  // to the following batch; false at the end
  void load(Batch& slot, int epoch, int64_t step);
  void produce();
  // Slots neither loaded nor held by the caller (with mutex_ held).
  int64_t freeSlots() const;

  ShardLoader& loader_;
  const int last_epoch_;
  const int64_t batches_per_epoch_;
  int loaded_epoch_ = 0;  // the epoch the loader's permutation is for
  std::vector<Batch> slots_;
  std::vector<std::shared_ptr<void>> pins_;  // released before slots_ is freed
  int next_epoch_;                           // the position of the next batch to load
  int64_t next_step_;
  bool at_end_ = false;

  // Background loading (prefetch > 0) only.
  std::mutex mutex_;
  std::condition_variable changed_;
  int64_t produced_ = 0;   // batches loaded so far
  int64_t consumed_ = 0;   // batches handed out and released
  bool holding_ = false;   // whether the caller holds slot consumed_ % size
  bool finished_ = false;  // the producer has loaded the last batch
  bool stopping_ = false;
  // A wake-up costs the waker a system call, so each side wakes the other only when it
  // sleeps, and the producer sleeps until refill_at_ slots are free: one wake-up a burst.
  int64_t refill_at_ = 1;
  bool producer_sleeps_ = false;
  bool consumer_sleeps_ = false;
  std::exception_ptr error_;
  std::thread producer_;
};

}  // namespace ranklab
