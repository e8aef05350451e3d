#include "app/cli/progress_printer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/terminal_text.h"

namespace ranklab {

namespace {

// "42 s", "3 min 05 s", "1 h 02 min"
std::string duration(double seconds) {
  const auto s = static_cast<long long>(std::llround(seconds));
  char text[48];
  if (s < 60)
    std::snprintf(text, sizeof text, "%lld s", s);
  else if (s < 3600)
    std::snprintf(text, sizeof text, "%lld min %02lld s", s / 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%lld h %02lld min", s / 3600, s % 3600 / 60);
  return text;
}

// A line per rank that says how it was set up: at 64 ranks, 64 lines before the first step.
bool isSetUpDetail(const std::string& kind) {
  return kind == "activations" || kind == "traffic" || kind == "pipeline" || kind == "tensor" ||
         kind == "device";
}

}  // namespace

std::string progressLine(const ProgressSnapshot& p) {
  char head[160];
  if (p.total_steps > 0) {
    std::snprintf(head, sizeof head, "  epoch %d/%d  step %lld/%lld  %5.1f %%", p.epoch, p.epochs,
                  static_cast<long long>(p.step), static_cast<long long>(p.total_steps),
                  100.0 * double(p.step) / double(p.total_steps));
  } else if (p.epochs > 0) {
    std::snprintf(head, sizeof head, "  epoch %d/%d  step %lld", p.epoch, p.epochs,
                  static_cast<long long>(p.step));
  } else {  // a command's ranks (ranklab watch): no epochs or end known
    std::snprintf(head, sizeof head, "  step %lld", static_cast<long long>(p.step));
  }
  const std::string eta = p.eta_s >= 0   ? "  ETA " + duration(p.eta_s)
                          : p.epochs > 0 ? "  ETA ?"
                                         : "";
  char tail[128];
  std::snprintf(tail, sizeof tail, "  rank %d loss %.4f  %.0f samples/s", p.rank, p.loss,
                p.samples_per_s);
  return head + eta + tail;
}

double etaSeconds(int64_t first_step, int64_t step, int64_t total_steps, double elapsed_s) {
  const int64_t done = step - first_step;
  if (total_steps <= 0 || done <= 0 || elapsed_s <= 0) return -1;
  return double(std::max<int64_t>(0, total_steps - step)) * elapsed_s / double(done);
}

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
    first_step_number_ = step.step;
  }
  samples_ += step.samples;
  if (quiet_ || now - last_print_ < std::chrono::seconds(1)) return;
  last_print_ = now;
  const double elapsed = std::chrono::duration<double>(now - first_step_).count();
  ProgressSnapshot p;
  p.epoch = step.epoch;
  p.epochs = epochs_;
  p.step = step.step;
  p.total_steps = total_steps_;
  p.rank = step.rank;
  p.loss = step.loss;
  p.samples_per_s = elapsed > 0 ? samples_ / elapsed : 0.0;
  p.eta_s = etaSeconds(first_step_number_, step.step, total_steps_, elapsed);
  std::fprintf(stderr, "%s\n", progressLine(p).c_str());
}

void ProgressPrinter::onEval(const EvalRow& eval) {
  // Evaluations may fall inside an epoch (train.eval_every): the step says when.
  std::fprintf(stderr, "  step %lld (epoch %d/%d): test accuracy %.4f  test loss %.4f\n",
               static_cast<long long>(eval.step), eval.epoch, epochs_, eval.test_accuracy,
               eval.test_loss);
}

void ProgressPrinter::onEvent(const EventRow& event) {
  if (event.kind == "plan") {
    total_steps_ = event.step;  // the run's last step: what percent and ETA count towards
    return;
  }
  // What went wrong and what the launcher did about it show even with --quiet.
  const bool always = event.kind == "error" || event.kind == "fault" || event.kind == "failure" ||
                      event.kind == "restart" || event.kind == "resumed" ||
                      event.kind == "elastic" || event.kind == "queue";
  if (!always && quiet_) return;
  if (!verbose_ && isSetUpDetail(event.kind)) return;
  // A restart, a resume or an elastic change is the launcher's act (its rank field names
  // the rank that failed, which the text says too).
  const bool launchers =
      event.kind == "restart" || event.kind == "resumed" || event.kind == "elastic";
  const std::string who = event.kind == "queue" ? "slurm"
                          : launchers           ? "launcher"
                                                : "rank " + std::to_string(event.rank);
  std::fprintf(stderr, "  [%s] %s: %s\n", event.kind.c_str(), who.c_str(),
               terminalSafe(event.text).c_str());
}

void ProgressPrinter::onOutput(int rank, bool is_stderr, const std::string& line) {
  std::fprintf(stderr, "  [rank %d%s] %s\n", rank, is_stderr ? " err" : "",
               terminalSafe(line).c_str());
}

}  // namespace ranklab
