// One background thread that runs communication tasks in the order they were posted, so
// gradient buckets move while backward computes the rest. Only this thread talks to the
// communicator between post() and drain().
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace ranklab {

class CommThread {
 public:
  CommThread();
  ~CommThread();  // finishes posted tasks, then joins; never throws
  CommThread(const CommThread&) = delete;
  CommThread& operator=(const CommThread&) = delete;

  void post(std::function<void()> task);
  // Returns once every posted task ran; rethrows the first exception a task threw.
  void drain();

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> tasks_;
  bool busy_ = false;
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::thread thread_;
};

}  // namespace ranklab
