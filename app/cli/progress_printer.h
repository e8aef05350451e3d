// Live progress of `ranklab run` on stderr: one line a second, plus rank output.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "launch/run_observer.h"

namespace ranklab {

// What one progress line says.
struct ProgressSnapshot {
  int epoch = 0;
  int epochs = 0;
  int64_t step = 0;
  int64_t total_steps = 0;  // 0 until the ranks' plan arrives
  int rank = 0;
  double loss = 0;
  double samples_per_s = 0;
  double eta_s = -1;  // < 0: not known yet
};

// "  epoch 1/2  step 120/468  25.6 %  ETA 3 s  rank 0 loss 0.5123  45000 samples/s"
std::string progressLine(const ProgressSnapshot& p);

// Seconds left at the rate since the first step, < 0 while it cannot be told.
double etaSeconds(int64_t first_step, int64_t step, int64_t total_steps, double elapsed_s);

class ProgressPrinter : public RunObserver {
 public:
  // `verbose`: also each rank's set-up detail (its traffic formula, activations per layer,
  // stage, slice and device), which `runs show` and the workbench keep.
  ProgressPrinter(int epochs, bool quiet, bool verbose = false)
      : epochs_(epochs), quiet_(quiet), verbose_(verbose) {}

  void onStarted(int64_t run_id, const std::vector<std::string>& command) override;
  void onStep(const StepRow& step) override;
  void onEval(const EvalRow& eval) override;
  void onEvent(const EventRow& event) override;
  void onOutput(int rank, bool is_stderr, const std::string& line) override;

 private:
  using Clock = std::chrono::steady_clock;
  int epochs_;
  bool quiet_;
  bool verbose_;
  Clock::time_point first_step_{};
  Clock::time_point last_print_{};
  int64_t first_step_number_ = 0;
  int64_t total_steps_ = 0;  // from the ranks' "plan" event
  int64_t samples_ = 0;
  bool seen_step_ = false;
};

}  // namespace ranklab
