#include "engine/sim/simulation_stream.h"

#include <algorithm>
#include <limits>

#include "engine/job/fault_draws.h"
#include "engine/sim/model_parts.h"
#include "engine/sim/step_actions.h"
#include "engine/sim/step_replay.h"
#include "engine/train/memory_estimate.h"

namespace ranklab {

int64_t stepsPerEpoch(const JobSpec& job) {
  // A text corpus's windows are only known once it is read: a simulation of one takes 200
  // steps unless told (--steps).
  if (job.data.dataset == DatasetKind::kText) return 200;
  const int64_t all = job.data.dataset == DatasetKind::kFashionMnist ? 60000 : job.data.samples;
  const int64_t train = job.data.train_limit > 0 ? std::min(all, job.data.train_limit) : all;
  const int replicas =
      std::max(1, job.parallel.ranks / (job.parallel.pipeline * job.parallel.tensor));
  const int64_t per_step = int64_t{job.train.batch_size} * job.train.accumulate_steps * replicas;
  return std::max<int64_t>(1, train / per_step);
}

namespace {

// Each rank's extra sleep in step `step`: the straggler's, a slowed rank's, a stopped one's.
void faultDelays(const JobSpec& job, int64_t step, std::vector<double>& extra) {
  std::fill(extra.begin(), extra.end(), 0.0);
  const FaultSpec& s = job.fault;
  if (s.straggler_rank >= 0 && s.straggler_rank < static_cast<int>(extra.size()))
    extra[s.straggler_rank] += s.straggler_delay_ms * 1e6;
  if (s.moving_straggler_ms > 0)
    extra[movingStragglerAt(job, step, static_cast<int>(extra.size()))] +=
        s.moving_straggler_ms * 1e6;
  for (const InjectedFault& f : job.faults) {
    if (f.attempt != 0 || f.rank >= static_cast<int>(extra.size())) continue;
    if (f.action == FaultAction::kSlow && step > f.at_step) extra[f.rank] += f.ms * 1e6;
    if (f.action == FaultAction::kStop && step == f.at_step + 1) extra[f.rank] += f.seconds * 1e9;
  }
}

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

}  // namespace

struct SimulationStream::Model {
  Model(const JobSpec& job, const Calibration& calibration)
      : parts(job),
        steps(job, calibration, parts),
        replay(steps),
        memory(estimateMemory(job, false)) {}  // a simulation runs no evaluation
  ModelParts parts;
  StepModel steps;
  StepReplay replay;
  MemoryEstimate memory;
  std::vector<SimStep> out;
};

SimulationStream::SimulationStream(const JobSpec& job, const Calibration& calibration)
    : job_(job),
      calibration_(calibration),
      model_(std::make_unique<Model>(job_, calibration_)),
      per_epoch_(stepsPerEpoch(job_)),
      clock_(static_cast<size_t>(model_->steps.ranks()), 0.0),
      extra_(clock_.size(), 0.0),
      rows_(clock_.size()),
      spans_(clock_.size()) {}

SimulationStream::~SimulationStream() = default;

int SimulationStream::ranks() const {
  return model_->steps.ranks();
}

const std::vector<std::string>& SimulationStream::notes() const {
  return model_->steps.notes();
}

bool SimulationStream::sampled() const {
  return job_.telemetry.span_every > 0 && step_ % job_.telemetry.span_every == 0;
}

void SimulationStream::next(bool spans) {
  ++step_;
  faultDelays(job_, step_, extra_);
  model_->replay.run(clock_, extra_, model_->out, spans && sampled());
  for (int r = 0; r < ranks(); ++r) {
    const SimStep& s = model_->out[static_cast<size_t>(r)];
    rows_[static_cast<size_t>(r)] =
        stepRowOf(s, model_->memory.ranks[static_cast<size_t>(r)], job_, r, step_,
                  static_cast<int64_t>(clock_[static_cast<size_t>(r)]),
                  model_->steps.plan(r).counts_samples, per_epoch_);
    std::vector<SpanRow>& out = spans_[static_cast<size_t>(r)];
    out.clear();
    for (const SimPass& pass : s.passes) {
      SpanRow span;
      span.rank = r;
      span.step = step_;
      span.kind = (pass.forward ? "F" : "B") + std::to_string(pass.micro);
      span.start_ns = static_cast<int64_t>(pass.start_ns);
      span.end_ns = static_cast<int64_t>(pass.end_ns);
      out.push_back(span);
    }
  }
}

int64_t SimulationStream::bubbleNs(int rank) const {
  return model_->out[static_cast<size_t>(rank)].bubble_ns;
}

bool SimulationStream::endsHere() const {
  for (const InjectedFault& f : job_.faults)
    if (f.attempt == 0 && f.at_step == step_ && f.endsTheRank()) return true;
  return false;
}

}  // namespace ranklab
