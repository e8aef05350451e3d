#include "app/worker/simulation_feeder.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "comm/steady_clock.h"
#include "comm/telemetry/curve_keys.h"
#include "comm/telemetry/open_files.h"
#include "comm/telemetry/reporter.h"
#include "comm/telemetry/step_wire.h"
#include "engine/sim/calibration.h"
#include "engine/sim/simulation_stream.h"
#include "storage/bounded_read.h"

namespace ranklab {
namespace {

using Clock = std::chrono::steady_clock;

// The step at which a fault blocks the run (kill, exit, a stop without end), and its rank.
struct Block {
  int64_t after = -1;
  int rank = -1;
};

Block blockOf(const JobSpec& job) {
  Block block;
  for (const InjectedFault& f : job.faults) {
    if (f.attempt == 0 && f.endsTheRank() && (block.after < 0 || f.at_step < block.after))
      block = {f.at_step, f.rank};
  }
  return block;
}

telemetry::Step stepMessage(const StepRow& row) {
  telemetry::Step step;
  step.set_step(row.step);
  step.set_epoch(row.epoch + 1);  // the wire counts epochs from 1
  step.set_samples(row.samples);
  encodeMeasures(row, step);
  return step;
}

std::string hostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// A Reporter for each of ranks [first, end), sharing one ZeroMQ context, each said hello.
std::vector<std::unique_ptr<Reporter>> reportersFor(const JobSpec& job,
                                                    const FeederOptions& options, int ranks,
                                                    int first, int end) {
  std::optional<RankCurveKeys> keys;
  if (const char* text = std::getenv(kTelemetryKeysVariable)) {
    keys = parseKeysText(text);
    unsetenv(kTelemetryKeysVariable);
  }
  allowOpenFiles(size_t(end - first) * 3 + 256);  // a TCP socket and ZeroMQ's signalers
  const auto context = makeTelemetryContext(2, end - first + 16);
  std::vector<std::unique_ptr<Reporter>> reporters;
  for (int r = first; r < end; ++r) {
    ReporterOptions o;
    o.endpoint = options.endpoint;
    o.run_id = options.run_id;
    o.rank = r;
    o.spool_limit = static_cast<size_t>(job.telemetry.spool);
    o.step_batch_ms = 20;  // as a rank's (app/worker/main.cpp)
    // ZeroMQ's PULL reads its pipes in turn, so one rank's pipe drains only as fast as all
    // of them: a reporter closed first, with a real rank's 3 s, dropped its last steps and its
    // bye while a loaded collector worked through the other ranks' backlog ("not every rank
    // finished"). Its close waits as long as delivery takes, up to a minute.
    o.close_timeout_ms = 60'000;
    o.curve = keys;
    o.context = context;
    reporters.push_back(std::make_unique<Reporter>(o));
    reporters.back()->hello(ranks, hostName(), static_cast<int64_t>(getpid()));
  }
  return reporters;
}

}  // namespace

bool parseFeederFlag(const std::string& flag, const std::string& value, FeederOptions& options) {
  if (flag == "--simulate-live") {
    options.calibration_path = value;
  } else if (flag == "--rate") {
    options.rate = std::stod(value);
  } else if (flag == "--steps") {
    options.steps = std::stoll(value);
  } else {
    return false;
  }
  return true;
}

int runSimulationFeeder(const JobSpec& job, const FeederOptions& options) {
  const ReadLimit limit{uint64_t{64} << 20, "calibrations"};  // as launch/calibrate.cpp reads one
  SimulationStream stream(job, parseCalibration(readBoundedFile(options.calibration_path, limit),
                                                options.calibration_path));
  const int ranks = stream.ranks();
  const int first = options.process * ranks / options.processes;
  const int end = (options.process + 1) * ranks / options.processes;
  int64_t steps =
      options.steps > 0 ? options.steps : stepsPerEpoch(job) * std::max(1, job.train.epochs);
  if (job.train.max_steps > 0) steps = std::min(steps, job.train.max_steps);  // as a real run
  const auto reporters = reportersFor(job, options, ranks, first, end);
  const Block block = blockOf(job);
  const auto beat_every = std::chrono::milliseconds(std::max(10, job.telemetry.heartbeat_ms));
  const auto t0 = Clock::now();
  auto last_beat = t0;
  const auto beat = [&](bool silent_faulted) {
    for (int r = first; r < end; ++r)
      if (!(silent_faulted && r == block.rank)) reporters[size_t(r - first)]->heartbeat();
    last_beat = Clock::now();
  };
  for (int64_t step = 1; step <= steps; ++step) {
    stream.next(true);
    // When this step is due: the pace asked for, or the simulated one.
    const double due_s = options.rate > 0 ? step / options.rate : stream.clockNs(0) / 1e9;
    const auto due =
        t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(due_s));
    while (Clock::now() < due) {
      if (Clock::now() - last_beat >= beat_every) beat(false);
      std::this_thread::sleep_until(std::min(due, Clock::now() + beat_every));
    }
    for (int r = first; r < end; ++r) {
      Reporter& reporter = *reporters[size_t(r - first)];
      const StepRow& row = stream.row(r);
      reporter.step(stepMessage(row));
      // The passes on the rank's clock: the simulated ones moved to when the step was sent.
      const int64_t shift = reporter.sinceStart(steadyNowNs()) - row.time_ns;
      for (const SpanRow& s : stream.spans(r)) {
        telemetry::Span span;
        span.set_phase(s.kind);
        span.set_step(s.step);
        span.set_start_ns(s.start_ns + shift);
        span.set_end_ns(s.end_ns + shift);
        reporter.span(span);
      }
    }
    if (step == block.after) {
      // Blocked in the next collective: the others beat on, the faulted rank is silent,
      // until the launcher judges the run (telemetry.hang_limit_s) and ends this process.
      for (auto& reporter : reporters) reporter->flush();
      for (;;) {
        std::this_thread::sleep_for(beat_every);
        beat(true);
      }
    }
  }
  const int64_t train_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
  for (auto& reporter : reporters) reporter->bye(0, train_ns, "");
  for (auto& reporter : reporters) reporter->close();
  return 0;
}

}  // namespace ranklab
