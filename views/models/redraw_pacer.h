// Paces a page's chart redraws so that the UI thread works at most a given share of the
// wall time: a run's ranks share this machine's cores, and watching must not slow them
// (bench/run-watch-cost). The share measured is the thread's whole CPU (model updates and
// paints included), so the redraws give way to whatever else the thread must do.
#pragma once

namespace ranklab {

class RedrawPacer {
 public:
  RedrawPacer(int min_ms, int max_ms, double share)
      : min_ms_(min_ms), max_ms_(max_ms), share_(share) {}

  // After a redraw, with the thread's CPU seconds and a steady clock's seconds now: the
  // wait before the next one. It stretches while the thread worked more than its share since
  // the last call and shrinks back while it worked less, between min_ms and max_ms.
  int nextIntervalMs(double cpu_s, double wall_s);

  int intervalMs() const { return interval_ms_; }

 private:
  int min_ms_, max_ms_;
  double share_;
  int interval_ms_ = min_ms_;
  double last_cpu_s_ = -1, last_wall_s_ = 0;
};

// CPU seconds (user + system) the calling thread, or this whole process, has used.
double threadCpuSeconds();
double processCpuSeconds();

}  // namespace ranklab
