#include "app/worker/heartbeat_thread.h"

#include <algorithm>

namespace ranklab {

HeartbeatThread::HeartbeatThread(Reporter& reporter, std::chrono::milliseconds every,
                                 std::chrono::milliseconds flush_every)
    : reporter_(reporter), every_(every), flush_every_(flush_every), thread_([this] { beat(); }) {}

HeartbeatThread::~HeartbeatThread() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void HeartbeatThread::beat() {
  std::unique_lock<std::mutex> lock(mutex_);
  auto next_beat = std::chrono::steady_clock::now() + every_;
  while (!wake_.wait_for(lock, std::min(every_, flush_every_), [this] { return stopping_; })) {
    if (std::chrono::steady_clock::now() < next_beat) {
      reporter_.flush();
      continue;
    }
    reporter_.heartbeat();
    next_beat += every_;
  }
}

}  // namespace ranklab
