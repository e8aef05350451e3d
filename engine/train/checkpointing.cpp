// Resuming a run from a checkpoint and writing one: what the trainer saves besides the
// model (optimizer, loss scale, each rank's codec and optimizer slices) and the checks
// that a resumed run continues exactly.
#include "engine/train/checkpointing.h"

#include <cmath>

#include <cstdio>

#include "engine/train/sharded_optimizer_state.h"

namespace ranklab {

namespace {

std::string mismatch(const std::string& path, const std::string& what, const std::string& saved,
                     const std::string& job) {
  return path + ": the checkpoint's " + what + " is " + saved + ", this job's is " + job +
         "; a run continues exactly only with the same " + what;
}

constexpr int kCodecStateTag = 0x7c4b;  // rank -> rank 0: a checkpoint's compression state

// Every rank's compression state on rank 0, in rank order (empty on the other ranks).
std::vector<CodecState> gatherCodecStates(Communicator& comm, GradientSync& sync) {
  const CheckpointState* state = sync.checkpointState();
  const std::vector<uint8_t> own = toBytes(state ? state->saveCodecState() : CodecState{});
  if (comm.rank() != 0) {
    const uint64_t size = own.size();
    comm.send(&size, sizeof size, 0, kCodecStateTag);
    comm.send(own.data(), own.size(), 0, kCodecStateTag);
    return {};
  }
  std::vector<CodecState> states{codecStateFromBytes(own)};
  for (int r = 1; r < comm.size(); ++r) {
    uint64_t size = 0;
    comm.recv(&size, sizeof size, r, kCodecStateTag);
    std::vector<uint8_t> bytes(size);
    comm.recv(bytes.data(), bytes.size(), r, kCodecStateTag);
    states.push_back(codecStateFromBytes(bytes));
  }
  return states;
}

}  // namespace

// True when `local` holds on any rank (one tiny all-reduce).
bool onAnyRank(Communicator& comm, bool local) {
  if (comm.size() == 1) return local;
  float flag = local ? 1.f : 0.f;
  comm.allreduceSumNative(&flag, 1);
  return flag > 0.f;
}

// Restores model, optimizer, dropout stream and (with AMP) the loss scale from
// train.resume_from; returns where the run was.
Position resumeFrom(const JobSpec& job, const Checkpoint& c, const Communicator& comm,
                    Network& model, Optimizer& optimizer, LossScaler* scaler) {
  const std::string& path = job.train.resume_from;
  if (c.model != model.describe())
    throw CheckpointError(mismatch(path, "model", c.model, model.describe()));
  if (c.params.size() != model.parameterCount()) {
    throw CheckpointError(mismatch(path, "parameter count", std::to_string(c.params.size()),
                                   std::to_string(model.parameterCount())));
  }
  if (c.optimizer != optimizer.kind()) {
    throw CheckpointError(mismatch(path, "train.optimizer", c.optimizer, optimizer.kind()));
  }
  if (c.world != comm.size() && !job.train.elastic) {
    throw CheckpointError(mismatch(path, "world size (parallel.ranks)", std::to_string(c.world),
                                   std::to_string(comm.size())) +
                          "; train.elastic = true continues it on another world size");
  }
  if (c.seed != job.train.seed) {
    throw CheckpointError(
        mismatch(path, "train.seed", std::to_string(c.seed), std::to_string(job.train.seed)));
  }
  if (c.batch_size != job.train.batch_size) {
    throw CheckpointError(mismatch(path, "train.batch_size", std::to_string(c.batch_size),
                                   std::to_string(job.train.batch_size)));
  }
  try {
    optimizer.restore(c.optimizer_state);
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(path + ": " + e.what());
  }
  model.device().upload(model.params(), c.params.data(), c.params.size());
  model.setTrainingPasses(c.training_passes);
  // A checkpoint of an fp32 run resumed with AMP starts from amp.init_scale.
  if (scaler && c.has_loss_scale) {
    try {
      scaler->restore(c.loss_scale, static_cast<int>(c.loss_scale_clean_steps),
                      c.loss_scale_skipped_steps);
    } catch (const std::invalid_argument& e) {
      throw CheckpointError(path + ": " + e.what());
    }
  }
  // On another world size the epoch goes on from the share of it already seen, in the new
  // world's steps (rounded: at most half a global batch of it is seen twice or skipped).
  const double share = double(c.step_in_epoch) * c.world / comm.size();
  return {c.step, c.epoch, static_cast<int64_t>(std::llround(share))};
}

// After gradient_sync.start(): this rank's compression state from the checkpoint. Warns,
// naming the job keys, about state the checkpoint does not hold (the run then differs).
void resumeCompression(const JobSpec& job, const std::string& compression, const Checkpoint& c,
                       const Communicator& comm, GradientSync& sync, TrainObserver& observer,
                       int64_t step) {
  const std::string& path = job.train.resume_from;
  if (c.version >= 2 && c.compression != compression)
    throw CheckpointError(mismatch(path, "compression", c.compression, compression));
  CheckpointState* state = sync.checkpointState();
  std::string missing = state ? state->stateNotCheckpointed() : "";
  if (c.version < 2 && compression != "none") {
    missing =
        "compression.codec, compression.error_feedback, "
        "compression.momentum_correction (a version-1 checkpoint holds no codec state)";
  } else if (state && static_cast<size_t>(comm.rank()) < c.codec_states.size()) {
    try {
      state->restoreCodecState(c.codec_states[comm.rank()]);
    } catch (const std::invalid_argument& e) {
      throw CheckpointError(path + ": rank " + std::to_string(comm.rank()) + ": " + e.what());
    }
  }
  if (missing.empty() || comm.rank() != 0) return;
  const std::string warning =
      path + ": not resumed exactly: the checkpoint does not hold the state of " + missing +
      "; that state starts afresh, so this run's losses differ from a run that never stopped";
  std::fprintf(stderr, "warning: %s\n", warning.c_str());
  observer.onEvent("warning", warning, step);
}

void saveCheckpoint(const JobSpec& job, const std::string& compression, Communicator& comm,
                    GradientSync& sync, const Network& model, const Optimizer& optimizer,
                    const LossScaler* scaler, const Position& at, TrainObserver& observer) {
  // Compression state differs per rank: rank 0 gathers it and writes one file.
  std::vector<CodecState> codec_states;
  if (job.compression.compresses()) codec_states = gatherCodecStates(comm, sync);
  // So does the optimizer state of ranks that each update a slice of one shared model.
  const ParamRange own = sync.updateRange(model.parameterCount());
  const bool sliced = onAnyRank(comm, own.begin != 0 || own.end != model.parameterCount());
  OptimizerState optimizer_state =
      sliced ? gatherOptimizerState(comm, optimizer, own) : optimizer.state();
  // ZeRO 3 holds a shard of the parameters: every rank takes part in gathering them.
  std::vector<float> params;
  if (model.params()) {
    params.resize(model.parameterCount());
    model.device().download(params.data(), model.params(), params.size());
  } else {
    params.resize(model.parameterCount());
    sync.sharded()->wholeParameters(params.data(), params.size());
  }
  // Synchronous data parallel keeps every other part identical: rank 0 speaks for all.
  if (comm.rank() != 0) return;
  Checkpoint c;
  c.compression = compression;
  c.codec_states = std::move(codec_states);
  c.model = model.describe();
  c.params = std::move(params);
  c.optimizer = optimizer.kind();
  c.optimizer_state = std::move(optimizer_state);
  c.step = at.step;
  c.epoch = at.epoch;
  c.step_in_epoch = at.step_in_epoch;
  c.training_passes = model.trainingPasses();
  c.seed = job.train.seed;
  c.world = comm.size();
  c.batch_size = job.train.batch_size;
  if (scaler) {
    c.has_loss_scale = true;
    c.loss_scale = scaler->scale();
    c.loss_scale_clean_steps = scaler->cleanStepsInARow();
    c.loss_scale_skipped_steps = scaler->skippedSteps();
  }
  writeCheckpoint(job.train.checkpoint_path, c);
  observer.onEvent("checkpoint",
                   "step " + std::to_string(at.step) + " written to " + job.train.checkpoint_path,
                   at.step);
}

}  // namespace ranklab
