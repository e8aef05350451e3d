#include "views/models/redraw_pacer.h"

#include <sys/resource.h>

#include <algorithm>

namespace ranklab {

int RedrawPacer::nextIntervalMs(double cpu_s, double wall_s) {
  const double cpu = cpu_s - last_cpu_s_, wall = wall_s - last_wall_s_;
  const bool first = last_cpu_s_ < 0;
  last_cpu_s_ = cpu_s;
  last_wall_s_ = wall_s;
  if (first || wall <= 0) return interval_ms_;
  // Half a step toward the interval that would have met the share: steady, not jumpy.
  const double wanted = interval_ms_ * (cpu / wall) / share_;
  const double next = 0.5 * interval_ms_ + 0.5 * wanted;
  interval_ms_ = std::clamp(static_cast<int>(next), min_ms_, max_ms_);
  return interval_ms_;
}

namespace {

double cpuSeconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  const auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

double threadCpuSeconds() {
  return cpuSeconds(RUSAGE_THREAD);
}
double processCpuSeconds() {
  return cpuSeconds(RUSAGE_SELF);
}

}  // namespace ranklab
