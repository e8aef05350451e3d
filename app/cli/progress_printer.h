// Live progress of `ranklab run` on stderr: one line a second, plus rank output.
#pragma once

#include <chrono>
#include <cstdint>

#include "app/core/job_runner.h"

namespace ranklab {

class ProgressPrinter : public RunObserver {
 public:
  ProgressPrinter(int epochs, bool quiet) : epochs_(epochs), quiet_(quiet) {}

  void onStarted(int64_t run_id, const std::vector<std::string>& command) override;
  void onStep(const StepRow& step) override;
  void onEval(const EvalRow& eval) override;
  void onEvent(const EventRow& event) override;
  void onOutput(int rank, bool is_stderr, const std::string& line) override;

 private:
  using Clock = std::chrono::steady_clock;
  int epochs_;
  bool quiet_;
  Clock::time_point first_step_{};
  Clock::time_point last_print_{};
  int64_t samples_ = 0;
  bool seen_step_ = false;
};

}  // namespace ranklab
