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

constexpr int kModelPartTag = 0x7c4d;  // a split model's part -> rank 0

// One part's parameters, or one of its optimizer's per-parameter tensors, to rank 0.
void sendPart(Communicator& comm, const std::vector<float>& values) {
  comm.send(values.data(), values.size() * sizeof(float), 0, kModelPartTag);
}

// A split model's checkpoint is the whole model: the first replica's ranks (world ranks 0 to
// stages x slices - 1, rank 0 among them) each hold one part; rank 0 receives every other
// part with its map and writes each value where it sits in the whole. On rank 0, `params`
// and `state` become the whole model's.
void assembleWholeModel(const RunParts& run, std::vector<float>& params, OptimizerState& state) {
  Communicator& comm = run.world;
  if (run.layout.coords().data != 0) return;
  if (comm.rank() != 0) {
    const uint64_t count = run.map.index.size();
    comm.send(&count, sizeof count, 0, kModelPartTag);
    comm.send(run.map.index.data(), count * sizeof(uint64_t), 0, kModelPartTag);
    sendPart(comm, params);
    for (const auto& [name, values] : state.tensors) sendPart(comm, values);
    return;
  }
  // Every part's optimizer holds the same tensors, each one value per parameter.
  const size_t whole = run.map.whole_count;
  std::vector<float> whole_params(whole);
  run.map.placeInWhole(params.data(), whole_params);
  for (auto& [name, values] : state.tensors) {
    std::vector<float> whole_values(whole);
    run.map.placeInWhole(values.data(), whole_values);
    values = std::move(whole_values);
  }
  const LayoutDegrees& degrees = run.layout.degrees();
  for (int r = 1; r < degrees.pipeline * degrees.tensor; ++r) {
    ModelPartMap part{run.map.whole_model, whole, {}};
    uint64_t count = 0;
    comm.recv(&count, sizeof count, r, kModelPartTag);
    part.index.resize(count);
    comm.recv(part.index.data(), count * sizeof(uint64_t), r, kModelPartTag);
    std::vector<float> values(count);
    comm.recv(values.data(), count * sizeof(float), r, kModelPartTag);
    part.placeInWhole(values.data(), whole_params);
    for (auto& [name, whole_values] : state.tensors) {
      comm.recv(values.data(), count * sizeof(float), r, kModelPartTag);
      part.placeInWhole(values.data(), whole_values);
    }
  }
  params = std::move(whole_params);
}

// The checkpoint's optimizer state cut to this rank's part of the model.
OptimizerState partOfState(const OptimizerState& whole, const ModelPartMap& map) {
  if (map.isWhole()) return whole;
  OptimizerState part{whole.steps, {}};
  for (const auto& [name, values] : whole.tensors) {
    // A tensor of another size is refused by the optimizer's restore, naming it.
    part.tensors.emplace_back(name, values.size() == map.whole_count ? map.partOf(values) : values);
  }
  return part;
}

}  // namespace

// True when `local` holds on any rank (one tiny all-reduce).
bool onAnyRank(Communicator& comm, bool local) {
  if (comm.size() == 1) return local;
  float flag = local ? 1.f : 0.f;
  comm.allreduceSumNative(&flag, 1);
  return flag > 0.f;
}

Position resumeFrom(const JobSpec& job, const Checkpoint& c, const RunParts& run) {
  const std::string& path = job.train.resume_from;
  const ModelPartMap& map = run.map;
  if (c.model != map.whole_model)
    throw CheckpointError(mismatch(path, "model", c.model, map.whole_model));
  if (c.params.size() != map.whole_count) {
    throw CheckpointError(mismatch(path, "parameter count", std::to_string(c.params.size()),
                                   std::to_string(map.whole_count)));
  }
  if (c.optimizer != run.optimizer.kind()) {
    throw CheckpointError(mismatch(path, "train.optimizer", c.optimizer, run.optimizer.kind()));
  }
  const int world = run.world.size();
  if (c.world != world && !job.train.elastic) {
    throw CheckpointError(mismatch(path, "world size (parallel.ranks)", std::to_string(c.world),
                                   std::to_string(world)) +
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
    run.optimizer.restore(partOfState(c.optimizer_state, map));
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(path + ": " + e.what());
  }
  const std::vector<float> params = map.partOf(c.params);
  run.model.device().upload(run.model.params(), params.data(), params.size());
  run.model.setTrainingPasses(c.training_passes);
  // A checkpoint of an fp32 run resumed with AMP starts from amp.init_scale.
  if (run.scaler && c.has_loss_scale) {
    try {
      run.scaler->restore(c.loss_scale, static_cast<int>(c.loss_scale_clean_steps),
                          c.loss_scale_skipped_steps);
    } catch (const std::invalid_argument& e) {
      throw CheckpointError(path + ": " + e.what());
    }
  }
  // On another number of replicas the epoch goes on from the share of it already seen, in
  // the new replicas' steps (rounded: at most half a global batch of it is seen twice or
  // skipped).
  const double share = double(c.step_in_epoch) * c.replicas / run.layout.degrees().data;
  return {c.step, c.epoch, static_cast<int64_t>(std::llround(share))};
}

// After gradient_sync.start(): this rank's compression state from the checkpoint. Warns,
// naming the job keys, about state the checkpoint does not hold (the run then differs).
void resumeCompression(const JobSpec& job, const std::string& compression, const Checkpoint& c,
                       const RunParts& run, TrainObserver& observer, int64_t step) {
  const std::string& path = job.train.resume_from;
  const Communicator& comm = run.world;
  if (c.version >= 2 && c.compression != compression)
    throw CheckpointError(mismatch(path, "compression", c.compression, compression));
  CheckpointState* state = run.sync.checkpointState();
  std::string missing = state ? state->stateNotCheckpointed() : "";
  if (c.version < 2 && job.compression.compresses()) {
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

void saveCheckpoint(const JobSpec& job, const std::string& compression, const RunParts& run,
                    const Position& at, TrainObserver& observer) {
  Communicator& comm = run.world;
  // Compression state differs per rank: rank 0 gathers it and writes one file.
  std::vector<CodecState> codec_states;
  if (job.compression.compresses()) codec_states = gatherCodecStates(comm, run.sync);
  // So does the optimizer state of a replica's ranks that each update a slice of its part.
  Communicator& replicas = run.layout.dataGroup();
  const Network& model = run.model;
  const ParamRange own = run.sync.updateRange(model.parameterCount());
  const bool sliced = onAnyRank(replicas, own.begin != 0 || own.end != model.parameterCount());
  OptimizerState optimizer_state =
      sliced ? gatherOptimizerState(replicas, run.optimizer, own) : run.optimizer.state();
  // ZeRO 3 holds a shard of the parameters: every replica takes part in gathering them.
  std::vector<float> params(model.parameterCount());
  if (model.params())
    model.device().download(params.data(), model.params(), params.size());
  else
    run.sync.sharded()->wholeParameters(params.data(), params.size());
  // Pipeline stages and tensor slices: the first replica's parts make the whole model.
  if (!run.map.isWhole()) assembleWholeModel(run, params, optimizer_state);
  // Synchronous data parallel keeps every other part identical: rank 0 speaks for all.
  if (comm.rank() != 0) return;
  Checkpoint c;
  c.compression = compression;
  c.codec_states = std::move(codec_states);
  c.model = run.map.whole_model;
  c.params = std::move(params);
  c.optimizer = run.optimizer.kind();
  c.optimizer_state = std::move(optimizer_state);
  c.step = at.step;
  c.epoch = at.epoch;
  c.step_in_epoch = at.step_in_epoch;
  c.training_passes = model.trainingPasses();
  c.seed = job.train.seed;
  c.world = comm.size();
  c.replicas = run.layout.degrees().data;
  c.batch_size = job.train.batch_size;
  if (const LossScaler* scaler = run.scaler) {
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
