#include "views/loop_watch.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

namespace ranklab {

namespace {
constexpr int kTickMs = 50;  // short enough to see a 100 ms stall, cheap enough to be free
constexpr double kMemoryEveryS = 1.0;
}  // namespace

LoopWatch::LoopWatch(QObject* parent) : QObject(parent) {
  timer_.setTimerType(Qt::PreciseTimer);
  timer_.setInterval(kTickMs);
  connect(&timer_, &QTimer::timeout, this, [this] { tick(); });
  clock_.start();
  timer_.start();
  memory_.emplace_back(0.0, residentMb());
}

void LoopWatch::tick() {
  const qint64 now = clock_.elapsed();
  // The first tick waits for the window to be built and the event loop to start: not a stall.
  if (ticked_) {
    late_ms_.push_back(static_cast<float>(std::max<qint64>(0, now - last_ms_ - kTickMs)));
    if (late_ms_.back() >= max_ms_) {
      max_ms_ = late_ms_.back();
      worst_at_s_ = now / 1000.0;
    }
  }
  last_ms_ = now;
  ticked_ = true;
  const double seconds = now / 1000.0;
  if (seconds - memory_.back().first >= kMemoryEveryS) memory_.emplace_back(seconds, residentMb());
}

double LoopWatch::lateMs(double q) const {
  if (late_ms_.empty()) return 0;
  std::vector<float> sorted = late_ms_;
  const size_t at = std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()));
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(at), sorted.end());
  return sorted[at];
}

double LoopWatch::residentMb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024;  // kB
  }
  return 0;
}

double LoopWatch::residentMbAt(double seconds_ago) const {
  const double at = clock_.elapsed() / 1000.0 - seconds_ago;
  double mb = memory_.front().second;
  for (const auto& [seconds, sample] : memory_) {
    if (seconds > at) break;
    mb = sample;
  }
  return mb;
}

std::string LoopWatch::summary() const {
  char text[200];
  std::snprintf(text, sizeof text,
                "event loop late p50 %.1f ms, p99 %.1f ms, max %.0f ms (%.1f s after the start; "
                "%zu ticks); memory %.0f MB (%.0f MB a minute before)",
                lateMs(0.5), lateMs(0.99), lateMaxMs(), worst_at_s_, late_ms_.size(), residentMb(),
                residentMbAt(60));
  return text;
}

}  // namespace ranklab
