// What watching a run cost the workbench, for `--exit-when-done`'s closing line and the load
// benchmarks (bench/run-thousand-ranks): how late the UI thread's event loop answered a
// timer (its latency, as a user's click would wait) and the process's resident memory over
// time, so that a run's end can say whether memory still grew in its last minute.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <string>
#include <utility>
#include <vector>

namespace ranklab {

class LoopWatch : public QObject {
 public:
  explicit LoopWatch(QObject* parent);

  // The lateness of the timer's ticks in ms at quantile q (0..1); 0 before any tick.
  double lateMs(double q) const;
  double lateMaxMs() const { return max_ms_; }
  // Resident memory in MB now, and as sampled (once a second) `seconds_ago`.
  static double residentMb();
  double residentMbAt(double seconds_ago) const;
  // One line: "event loop late p50 X ms, p99 Y ms, max Z ms; memory A MB (B MB a minute before)".
  std::string summary() const;

 private:
  void tick();

  QTimer timer_;
  QElapsedTimer clock_;
  qint64 last_ms_ = 0;
  bool ticked_ = false;
  float max_ms_ = 0;
  double worst_at_s_ = 0;  // when the longest stall ended
  std::vector<float> late_ms_;
  std::vector<std::pair<double, double>> memory_;  // (seconds since start, MB), one a second
};

}  // namespace ranklab
