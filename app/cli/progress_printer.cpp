#include "app/cli/progress_printer.h"

#include <cstdio>

namespace ranklab {

void ProgressPrinter::onStarted(int64_t run_id, const std::vector<std::string>& command) {
  std::string joined;
  for (const auto& part : command) joined += (joined.empty() ? "" : " ") + part;
  std::fprintf(stderr, "run %lld started: %s\n", static_cast<long long>(run_id), joined.c_str());
}

void ProgressPrinter::onStep(const StepRow& step) {
  const auto now = Clock::now();
  if (!seen_step_) {
    seen_step_ = true;
    first_step_ = last_print_ = now;
  }
  samples_ += step.samples;
  if (quiet_ || now - last_print_ < std::chrono::seconds(1)) return;
  last_print_ = now;
  const double elapsed = std::chrono::duration<double>(now - first_step_).count();
  std::fprintf(stderr, "  epoch %d/%d  step %5lld  rank %d loss %.4f  %8.0f samples/s\n",
               step.epoch, epochs_, static_cast<long long>(step.step), step.rank, step.loss,
               elapsed > 0 ? samples_ / elapsed : 0.0);
}

void ProgressPrinter::onEval(const EvalRow& eval) {
  std::fprintf(stderr, "  epoch %d/%d done: test accuracy %.4f  test loss %.4f\n", eval.epoch,
               epochs_, eval.test_accuracy, eval.test_loss);
}

void ProgressPrinter::onEvent(const EventRow& event) {
  if (event.kind == "error" || event.kind == "fault" || !quiet_) {
    std::fprintf(stderr, "  [%s] rank %d: %s\n", event.kind.c_str(), event.rank,
                 event.text.c_str());
  }
}

void ProgressPrinter::onOutput(int rank, bool is_stderr, const std::string& line) {
  if (quiet_ && !is_stderr) return;
  std::fprintf(stderr, "  [rank %d%s] %s\n", rank, is_stderr ? " err" : "", line.c_str());
}

}  // namespace ranklab
