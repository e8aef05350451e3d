// A rank's heartbeats from a thread of their own: they go on while training is blocked in a
// collective or a receive, and stop only when the whole process does (SIGSTOP, a freeze), so
// the launcher can tell a waiting rank from a hung one (telemetry.hang_limit_s). Between
// beats it flushes the reporter every flush_every, so steps waiting for their batch leave
// while training waits (a rank ended then loses nothing it reported).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "comm/telemetry/reporter.h"

namespace ranklab {

class HeartbeatThread {
 public:
  HeartbeatThread(Reporter& reporter, std::chrono::milliseconds every,
                  std::chrono::milliseconds flush_every);
  ~HeartbeatThread();  // stops and joins
  HeartbeatThread(const HeartbeatThread&) = delete;
  HeartbeatThread& operator=(const HeartbeatThread&) = delete;

 private:
  void beat();

  Reporter& reporter_;
  std::chrono::milliseconds every_;
  std::chrono::milliseconds flush_every_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ranklab
