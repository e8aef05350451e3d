#include "engine/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/sim/model_parts.h"
#include "engine/sim/step_replay.h"
#include "engine/train/memory_estimate.h"

namespace ranklab {

int64_t stepsPerEpoch(const JobSpec& job) {
  // A text corpus's windows are only known once it is read: a simulation of one takes 200
  // steps unless told (--steps).
  if (job.data.dataset == "text") return 200;
  const int64_t all = job.data.dataset == "fashion-mnist" ? 60000 : job.data.samples;
  const int64_t train = job.data.train_limit > 0 ? std::min(all, job.data.train_limit) : all;
  const int replicas =
      std::max(1, job.parallel.ranks / (job.parallel.pipeline * job.parallel.tensor));
  const int64_t per_step = int64_t{job.train.batch_size} * job.train.accumulate_steps * replicas;
  return std::max<int64_t>(1, train / per_step);
}

namespace {

// Each rank's extra sleep in step `step`, and whether a fault ends the run after it.
struct FaultClock {
  const JobSpec& job;
  bool ends_after(int64_t step) const {
    for (const InjectedFault& f : job.faults)
      if (f.attempt == 0 && f.at_step == step &&
          (f.action == "kill" || f.action == "exit" || (f.action == "stop" && f.seconds == 0)))
        return true;
    return false;
  }
  void delays(int64_t step, std::vector<double>& extra) const {
    std::fill(extra.begin(), extra.end(), 0.0);
    const FaultSpec& s = job.fault;
    if (s.straggler_rank >= 0 && s.straggler_rank < static_cast<int>(extra.size()))
      extra[s.straggler_rank] += s.straggler_delay_ms * 1e6;
    for (const InjectedFault& f : job.faults) {
      if (f.attempt != 0 || f.rank >= static_cast<int>(extra.size())) continue;
      if (f.action == "slow" && step > f.at_step) extra[f.rank] += f.ms * 1e6;
      if (f.action == "stop" && step == f.at_step + 1) extra[f.rank] += f.seconds * 1e9;
    }
  }
};

StepRow stepRowOf(const SimStep& s, const RankMemory& memory, const JobSpec& job, int rank,
                  int64_t step, int64_t end_ns, bool counts_samples, int64_t per_epoch) {
  StepRow row;
  row.rank = rank;
  row.step = step;
  row.epoch = static_cast<int>((step - 1) / per_epoch);
  row.samples = counts_samples ? int64_t{job.train.batch_size} * job.train.accumulate_steps : 0;
  row.time_ns = end_ns;
#define RANKLAB_SIM_PHASE(name, kind) row.name##_ns = s.phases[index++];
  int index = 0;
  RANKLAB_STEP_PHASES(RANKLAB_SIM_PHASE)
#undef RANKLAB_SIM_PHASE
  row.loss = std::numeric_limits<double>::quiet_NaN();  // nothing is trained
  row.lr = job.train.lr;
  row.bytes_tx = s.bytes_tx;
  row.bytes_rx = s.bytes_rx;
  row.bytes_raw = s.bytes_raw;
  row.bytes_tensor = s.bytes_tensor;
  row.bytes_pipeline = s.bytes_pipeline;
  row.comm_tensor_ns = s.comm_tensor_ns;
  row.allreduces = s.allreduces;
  row.reduce_scatters = s.reduce_scatters;
  row.all_gathers = s.all_gathers;
  row.sends = s.sends;
  row.recvs = s.recvs;
  row.mem_params = static_cast<int64_t>(memory.params);
  row.mem_grads = static_cast<int64_t>(memory.grads);
  row.mem_optimizer = static_cast<int64_t>(memory.optimizer);
  row.mem_activations = static_cast<int64_t>(memory.activations);
  row.mem_buffers = static_cast<int64_t>(memory.buffers);
  return row;
}

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
  ModelParts parts(job);
  StepModel model(job, calibration, parts);
  StepReplay replay(model);
  // The ledger of training steps: a simulation runs no evaluation.
  const MemoryEstimate memory = estimateMemory(job, false);
  const int ranks = model.ranks();
  const int64_t per_epoch = stepsPerEpoch(job);
  const int every = job.telemetry.span_every;
  std::vector<double> clock(ranks, 0.0), extra(ranks, 0.0);
  StepMeasurer measurer;  // the accuracy's own measure of the rows, as of a real run's
  std::vector<std::vector<int64_t>> bubbles(ranks);
  std::vector<SimStep> out;
  std::vector<PendingRows> pending(ranks);
  const FaultClock faults{job};
  Prediction p;
  for (int64_t step = 1; step <= steps; ++step) {
    faults.delays(step, extra);
    const bool sampled = every > 0 && step % every == 0;
    replay.run(clock, extra, out, sampled && sink);
    for (int r = 0; r < ranks; ++r) {
      StepRow row = stepRowOf(out[r], memory.ranks[r], job, r, step, static_cast<int64_t>(clock[r]),
                              model.plan(r).counts_samples, per_epoch);
      measurer.add(row);
      bubbles[r].push_back(out[r].bubble_ns);
      if (!sink) continue;
      pending[r].steps.push_back(std::move(row));
      for (const SimPass& pass : out[r].passes) {
        SpanRow span;
        span.rank = r;
        span.step = step;
        span.kind = (pass.forward ? "F" : "B") + std::to_string(pass.micro);
        span.start_ns = static_cast<int64_t>(pass.start_ns);
        span.end_ns = static_cast<int64_t>(pass.end_ns);
        pending[r].spans.push_back(span);
      }
    }
    p.steps = step;
    const bool ends_here = faults.ends_after(step);
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
    if (clock[r] > clock[slowest]) slowest = r;
  std::vector<int64_t>& v = bubbles[slowest];
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  p.bubble_ns = v.empty() ? 0 : v[v.size() / 2];
  p.wall_s = clock[slowest] / 1e9;
  p.notes = model.notes();
  if (sink)
    for (int r = 0; r < ranks; ++r) {
      RankRow row;
      row.rank = r;
      row.host = calibration.machine;
      row.status = "done";
      row.train_ns = static_cast<int64_t>(clock[r]);
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
