#include "app/cli/attach_command.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/cli/json_output.h"
#include "app/cli/report_format.h"

namespace ranklab {

namespace {

volatile std::sig_atomic_t g_detach = 0;
void detachOnSignal(int) {
  g_detach = 1;
}

// What the terminal has shown of the run so far.
struct Followed {
  size_t events = 0;
  int64_t last_step = 0;
};

void printNewEvents(RunStore& store, int64_t id, Followed& seen) {
  const auto events = store.events(id);
  for (size_t i = seen.events; i < events.size(); ++i) {
    const EventRow& e = events[i];
    if (e.kind == "plan") continue;
    std::fprintf(stderr, "  [%s] rank %d: %s\n", e.kind.c_str(), e.rank, e.text.c_str());
  }
  seen.events = events.size();
}

// Rank 0's steps stored since the last line: the newest step, its loss, and steps/s.
void printProgress(RunStore& store, int64_t id, Followed& seen, double interval_s) {
  const auto steps = store.stepsOfRankFrom(id, 0, seen.last_step + 1);
  if (steps.empty()) return;
  const StepRow& last = steps.back();
  std::fprintf(stderr, "  epoch %d  step %lld  rank 0 loss %.4f  %.0f steps/s\n", last.epoch,
               static_cast<long long>(last.step), last.loss,
               double(last.step - seen.last_step) / interval_s);
  seen.last_step = last.step;
}

}  // namespace

int attachRun(RunStore& store, const CliArgs& args, int64_t id) {
  auto run = store.run(id);
  if (!run) throw std::runtime_error(args.db + ": no run with id " + std::to_string(id));
  g_detach = 0;
  std::signal(SIGINT, detachOnSignal);
  Followed seen;
  constexpr double kIntervalS = 1.0;
  if (run->status == "running")
    std::fprintf(stderr, "attached to run %lld (%s); Ctrl-C detaches, the run goes on\n",
                 static_cast<long long>(id), run->name.c_str());
  while (run && run->status == "running" && !g_detach) {
    printNewEvents(store, id, seen);
    printProgress(store, id, seen, kIntervalS);
    std::this_thread::sleep_for(std::chrono::duration<double>(kIntervalS));
    store.markLostRuns();  // a launcher that died unannounced ends the wait too
    run = store.run(id);
  }
  if (!run)
    throw std::runtime_error(args.db + ": run " + std::to_string(id) +
                             " was deleted while attached");
  printNewEvents(store, id, seen);
  if (g_detach && run->status == "running") {
    std::fprintf(stderr, "detached from run %lld; it goes on\n", static_cast<long long>(id));
    return 0;
  }
  const auto summary = store.summary(id);
  if (args.json)
    printJson(std::cout, summaryJson(*summary), std::cerr);
  else
    printSummary(std::cout, *summary);
  return run->status == "done" ? 0 : 1;
}

}  // namespace ranklab
