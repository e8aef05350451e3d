#include "engine/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/sim/simulation_stream.h"

namespace ranklab {

namespace {

// A rank's rows since the last flush.
struct PendingRows {
  std::vector<StepRow> steps;
  std::vector<SpanRow> spans;
};

// Rows reach the store a block of steps at a time, rank after rank, so each rank's rows go
// into the steps table's index in order rather than one rank's row between every other's.
constexpr int64_t kRowsPerFlush = 64;

void flush(std::vector<PendingRows>& pending, RunRowSink& sink) {
  for (PendingRows& rank : pending) {
    for (StepRow& row : rank.steps) sink.add(std::move(row));
    for (SpanRow& span : rank.spans) sink.add(std::move(span));
    rank.steps.clear();
    rank.spans.clear();
  }
}

// The simulation's loop, rows handed to `sink` when there is one.
Prediction simulate(const JobSpec& job, const Calibration& calibration, int64_t steps,
                    RunRowSink* sink) {
  SimulationStream stream(job, calibration);
  const int ranks = stream.ranks();
  StepMeasurer measurer;  // the accuracy's own measure of the rows, as of a real run's
  std::vector<std::vector<int64_t>> bubbles(ranks);
  std::vector<PendingRows> pending(ranks);
  Prediction p;
  for (int64_t step = 1; step <= steps; ++step) {
    stream.next(sink != nullptr);
    for (int r = 0; r < ranks; ++r) {
      const StepRow& row = stream.row(r);
      measurer.add(row);
      bubbles[r].push_back(stream.bubbleNs(r));
      if (!sink) continue;
      pending[r].steps.push_back(row);
      for (const SpanRow& span : stream.spans(r)) pending[r].spans.push_back(span);
    }
    p.steps = step;
    const bool ends_here = stream.endsHere();
    if (sink && (step % kRowsPerFlush == 0 || step == steps || ends_here)) flush(pending, *sink);
    if (ends_here) {
      p.status = "failed";
      break;
    }
  }
  const MeasuredStep measured = measurer.result();
  p.step_s = measured.step_s;
  p.memory_bytes = measured.memory_bytes;
  p.phases = measured.phases.value_or(PhaseTimes{});
  int slowest = 0;  // the rank whose last step ended last, as the measure takes it
  for (int r = 0; r < ranks; ++r)
    if (stream.clockNs(r) > stream.clockNs(slowest)) slowest = r;
  std::vector<int64_t>& v = bubbles[slowest];
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  p.bubble_ns = v.empty() ? 0 : v[v.size() / 2];
  p.wall_s = stream.clockNs(slowest) / 1e9;
  p.notes = stream.notes();
  if (sink)
    for (int r = 0; r < ranks; ++r) {
      RankRow row;
      row.rank = r;
      row.host = calibration.machine;
      row.status = "done";
      row.train_ns = static_cast<int64_t>(stream.clockNs(r));
      sink->add(row);
    }
  return p;
}

}  // namespace

Prediction simulateRun(const JobSpec& job, const Calibration& calibration,
                       const SimulationOptions& options, RunRowSink& sink) {
  const int64_t steps = options.steps > 0 ? options.steps : stepsPerEpoch(job) * job.train.epochs;
  return simulate(job, calibration, steps, &sink);
}

Prediction predictRun(const JobSpec& job, const Calibration& calibration, int64_t steps) {
  return simulate(job, calibration, steps, nullptr);
}

}  // namespace ranklab
