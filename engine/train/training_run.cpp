#include "engine/train/training_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <utility>
#include <vector>

#include "comm/steady_clock.h"
#include "engine/data/text_dataset.h"
#include "engine/job/fault_draws.h"
#include "engine/model/models.h"
#include "engine/model/precision_of.h"
#include "engine/model/text_sampler.h"
#include "engine/train/activation_ledger.h"
#include "engine/train/pipeline_schedule.h"
#include "engine/train/strategy_registry.h"
#include "engine/train/traffic_formula.h"
#include "engine/train/transport_choice.h"
#include "kernels/cpu/mixed_gemm.h"

namespace ranklab {

namespace {

// With momentum correction the gradient sync applies the momentum, before compression.
TrainSpec updateRule(const JobSpec& job) {
  TrainSpec rule = job.train;
  if (compressesWithMomentum(job)) rule.momentum = 0;
  return rule;
}

// One step's passes on a zero batch before the clock starts, through the step's schedule
// (so every micro-batch shape is seen). The GEMM library (oneDNN) compiles a kernel for
// each shape on its first call: ~25 ms per rank, twice that when two ranks compile at once,
// which step 1 used to pay. Leaves the model as it was: no update, the dropout pass count
// restored, the gradients discarded by a zeroGrads(). `labels_per_sample`: the data's (a
// stage's own output may hold a slice's rows alone, under sequence parallelism).
void warmUpKernels(Network& model, StepSchedule& schedule, int batch, int labels_per_sample) {
  Batch zeros;
  zeros.images.assign(static_cast<size_t>(batch) * model.inputShape().size(), 0.f);
  zeros.labels.assign(static_cast<size_t>(batch) * labels_per_sample, 0);
  const uint64_t passes = model.trainingPasses();
  schedule.run(model, zeros, 1.f, {});
  model.zeroGrads();
  model.setTrainingPasses(passes);
}

// Test loss and accuracy over the whole test set: each data replica scores its slice
// (through its pipeline's stages when there are several), then every rank sums. The
// tensor slices of a stage all compute the same scores: the first one's count.
EvalStats evaluateOn(Network& model, StepSchedule& schedule, ParallelLayout& layout,
                     Communicator& peers, const Dataset& test, int batch, int64_t limit) {
  Communicator& replicas = layout.dataGroup();
  const int64_t begin = test.count * replicas.rank() / replicas.size();
  int64_t end = test.count * (replicas.rank() + 1) / replicas.size();
  if (limit > 0) end = std::min(end, begin + limit);  // the same samples at every evaluation
  ScoredSamples part =
      schedule.evaluate(model, test.image(begin),
                        test.labels.data() + begin * test.labels_per_sample, end - begin, batch);
  if (layout.coords().slice != 0) part = {};
  float totals[3] = {static_cast<float>(part.loss_sum), static_cast<float>(part.correct),
                     static_cast<float>(part.samples)};
  peers.allreduceSumNative(totals, 3);
  EvalStats stats;
  stats.test_loss = totals[2] > 0 ? totals[0] / totals[2] : 0;
  stats.test_accuracy = totals[2] > 0 ? totals[1] / totals[2] : 0;
  return stats;
}

// The views whose squares this rank counts toward the gradient's norm: a tensor replicated
// on every slice once (by slice 0), a GPT head's copy of the token table never (the first
// stage counts the table). Empty: every view.
std::vector<bool> countedViews(const Network& model, const LayoutCoords& at) {
  std::vector<bool> counted;
  bool all = true;
  for (size_t v = 0; v < model.views().size(); ++v) {
    const bool mine = at.slice == 0 || model.views()[v].sliced;
    counted.push_back(mine && model.views()[v].name != "lm_head.weight");
    all = all && counted.back();
  }
  return all ? std::vector<bool>{} : counted;
}

// Only checkpoints need to know where a part's parameters sit in the whole model.
bool savesOrResumes(const JobSpec& job) {
  return !job.train.checkpoint_path.empty() || !job.train.resume_from.empty();
}

// The layout, built before the gradient sync that runs over its data groups; null under a
// parameter server, whose servers leave the world only once the sync exists.
std::unique_ptr<ParallelLayout> layoutBeforeSync(const JobSpec& job, Communicator& world) {
  if (usesParameterServer(job)) return nullptr;
  return std::make_unique<ParallelLayout>(world, degreesOf(job, world.size()));
}

std::unique_ptr<TensorGroup> tensorGroupOf(const JobSpec& job, ParallelLayout* layout) {
  if (job.parallel.tensor == 1 || !layout) return nullptr;
  return std::make_unique<TensorGroup>(layout->tensorGroup(), job.parallel.sequence_parallel);
}

}  // namespace

TrainingRun::TrainingRun(const JobSpec& job, Communicator& comm, const Dataset& train_set,
                         const Dataset& test_set, TrainObserver& observer)
    : job_(job),
      observer_(observer),
      test_set_(test_set),
      layout_(layoutBeforeSync(job, comm)),
      tensor_(tensorGroupOf(job, layout_.get())),
      device_(deviceNamed(job.train.device, localRank(comm), {job.train.tf32})),
      model_(stageModel(job, train_set, comm.rank(), comm.size(), device_, tensor_.get())),
      part_map_(savesOrResumes(job) ? mapModelPart(job, train_set, tensor_.get(), model_)
                                    : ModelPartMap{}),
      made_sync_(makeGradientSync(job, layout_ ? layout_->dataGroup() : comm,
                                  weightMatrices(model_), device_)),
      sync_(std::move(made_sync_.sync)),
      device_trace_(device_),
      peers_(layout_ ? comm : sync_->peers()),
      compression_(describeCompression(codecOptions(job))) {
  const size_t parameters = model_.parameterCount();
  if (sync_->sharded()) {
    // ZeRO: state for this rank's shard alone.
    const ParamRange own = sync_->updateRange(parameters);
    auto sharded = std::make_unique<ShardedOptimizer>(
        makeOptimizer(updateRule(job), own.end - own.begin, device_), parameters, own);
    sharded_ = sharded.get();
    optimizer_ = std::move(sharded);
  } else {
    optimizer_ = makeOptimizer(updateRule(job), parameters, device_);
  }
  // AMP: low-precision products (stageModel), fp32 master weights, dynamic loss scaling.
  if (precisionOf(job.amp.dtype) != kernels::Precision::kFp32) {
    LossScalerOptions options;
    options.init_scale = static_cast<float>(job.amp.init_scale);
    options.growth_interval = job.amp.growth_interval;
    scaler_.emplace(options);
  }
  if (!layout_) layout_ = std::make_unique<ParallelLayout>(peers_, degreesOf(job, peers_.size()));
  GradientParts parts;
  if (job.parallel.tensor > 1) parts.slices = &layout_->tensorGroup();
  if (job.parallel.pipeline > 1) parts.stages = &layout_->pipelineGroup();
  if (sync_->sharded()) parts.shards = &layout_->dataGroup();
  norm_.emplace(job.train.grad_clip, parts, countedViews(model_, layout_->coords()));
  if (job.parallel.pipeline > 1)
    tied_table_ = TiedTableSync::make(model_, layout_->pipelineGroup());
  const int world_rank = comm.rank(), world_size = comm.size();
  schedule_ = makeStepSchedule(
      job, *layout_,
      [&job, &train_set, world_rank, world_size, this] {
        return stageModel(job, train_set, world_rank, world_size, device_, tensor_.get(),
                          PartValues::kUnset);  // bound to the stage's buffers
      },
      train_set.labels_per_sample);
  Communicator& replicas = layout_->dataGroup();
  loader_.emplace(train_set, replicas.rank(), replicas.size(), job.train.batch_size,
                  job.train.seed);
  steps_per_epoch_ = loader_->stepsPerEpoch() / job.train.accumulate_steps;
  if (steps_per_epoch_ == 0) {
    const int k = job.train.accumulate_steps;
    throw std::invalid_argument("train.batch_size " + std::to_string(job.train.batch_size) +
                                (k > 1 ? " x train.accumulate_steps " + std::to_string(k) : "") +
                                " x " + std::to_string(replicas.size()) + " ranks exceeds the " +
                                std::to_string(train_set.count) + " training samples");
  }
  const int64_t planned_steps = steps_per_epoch_ * job.train.epochs;
  total_steps_ =
      job.train.max_steps > 0 ? std::min(job.train.max_steps, planned_steps) : planned_steps;
  // The schedule spans the planned epochs; max_steps only stops early (so a run cut short
  // and resumed follows the same curve).
  lr_.emplace(job.train, steps_per_epoch_, planned_steps);
  startFrom(train_set);
}

// Resume, the shared model's buffers, the sync's start, the batch stream, the clock.
void TrainingRun::startFrom(const Dataset& train_set) {
  std::optional<Checkpoint> saved;
  if (!job_.train.resume_from.empty()) {
    saved = readCheckpoint(job_.train.resume_from);
    at_ = resumeFrom(job_, *saved, runParts());
    // Within this job's epoch: more steps of it than it has would train nothing and end "done".
    if (at_.step_in_epoch > steps_per_epoch_) {
      throw CheckpointError(job_.train.resume_from + ": field \"step_in_epoch\" is " +
                            std::to_string(saved->step_in_epoch) + " steps into epoch " +
                            std::to_string(saved->epoch) + ", which has " +
                            std::to_string(steps_per_epoch_) + " steps in this job");
    }
    observer_.onEvent(
        "checkpoint",
        "resumed from " + job_.train.resume_from + " after step " + std::to_string(at_.step),
        at_.step);
    if (saved->world != peers_.size()) resizedFrom(saved->world);
  }
  if (peers_.rank() == 0) {
    // The run's last step, so a launcher can show percent done and an ETA.
    observer_.onEvent("plan",
                      std::to_string(total_steps_) + " steps in all (" +
                          std::to_string(steps_per_epoch_) + " per epoch)",
                      total_steps_);
  }
  if (peers_.rank() == 0 && job_.data.dataset == DatasetKind::kText) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "bigram baseline %.4f nats/token: a bigram model counted on the training "
                  "split (add-one smoothed), scored on the validation split; samples of %d "
                  "tokens",
                  bigramBaseline(train_set, test_set_), train_set.labels_per_sample);
    observer_.onEvent("baseline", text, at_.step);
  }
  announceModelPart();
  // Each rank names its own GPU (ranks of a host take different ones).
  if (!made_sync_.how.empty())
    observer_.onEvent("device", device_.name() + ": " + made_sync_.how, at_.step);
  placeModel();
  if (saved) resumeCompression(job_, compression_, *saved, runParts(), observer_, at_.step);
  saved.reset();
  straggler_ = peers_.rank() == job_.fault.straggler_rank && job_.fault.straggler_delay_ms > 0;
  if (straggler_) {
    observer_.onEvent("fault",
                      "straggler: +" + std::to_string(job_.fault.straggler_delay_ms) +
                          " ms per step on rank " + std::to_string(peers_.rank()),
                      at_.step);
  }
  // Each layer's finished gradient may start moving while backward goes on (bucketing);
  // not under AMP, whose gradients are unscaled and checked only after backward, unless no
  // whole gradient is kept (ZeRO 2 and 3: each layer's moves, scaled, into the shards).
  if (!scaler_ || !model_.grads()) {
    on_ready_ = [this](size_t offset, size_t count) {
      sync_->gradientReady(model_.grads(), offset, count);
    };
  }
  // Whole accumulated steps: k batches each, an epoch's remainder left out.
  const int k = job_.train.accumulate_steps;
  batches_.emplace(*loader_, train_set.features, at_.epoch, at_.step_in_epoch * k,
                   job_.train.epochs, job_.data.prefetch, steps_per_epoch_ * k, pinBatches());
  checkpointed_step_ = at_.step;
  warmUpKernels(model_, *schedule_, job_.train.batch_size, train_set.labels_per_sample);
  // After the warm-up's passes every buffer a step holds exists: the ledger per layer.
  observer_.onEvent("activations",
                    activationsEventText(schedule_->memoryPerLayer(model_), job_, test_set_.classes,
                                         schedule_->copies()),
                    at_.step);
  // Start the clock together: start-up skew (data loading, MPI wire-up, kernel compilation)
  // is not training.
  peers_.barrier();
  loop_start_ns_ = steadyNowNs();
}

PinHostFn TrainingRun::pinBatches() {
  if (device_.hostMemory()) return {};
  return [this](void* data, size_t bytes) -> std::shared_ptr<void> {
    try {
      return device_.pinHost(data, bytes);
    } catch (const std::exception& e) {
      // Still correct, only slower: each upload then waits for its copy.
      if (!pin_failed_) {
        observer_.onEvent("device",
                          device_.name() + ": batches stay in pageable memory (" + e.what() +
                              "): each upload waits for its copy",
                          at_.step);
      }
      pin_failed_ = true;
      return nullptr;
    }
  };
}

void TrainingRun::announceModelPart() {
  // What this rank should send each step to each group, for runs show to set beside what it
  // measured (each rank its own: the stages and slices differ); where ranks train together.
  if (layout_->degrees().product() > 1) {
    observer_.onEvent("traffic",
                      "formula bytes per step: " +
                          trafficFormula(job_, model_, layout_->coords(), layout_->degrees()).str(),
                      at_.step);
  }
  if (job_.parallel.pipeline > 1) {
    const LayoutCoords& at = layout_->coords();
    observer_.onEvent(
        "pipeline",
        "stage " + std::to_string(at.stage) + " of " + std::to_string(job_.parallel.pipeline) +
            ": " + model_.layers().front()->name() + ".." + model_.layers().back()->name() + " (" +
            std::to_string(model_.parameterCount()) + " parameters), " + schedule_->name() + ", " +
            std::to_string(job_.parallel.microbatches) + " micro-batches",
        at_.step);
  }
  if (tensor_) {
    observer_.onEvent("tensor",
                      "slice " + std::to_string(tensor_->rank()) + " of " +
                          std::to_string(tensor_->size()) + ": " + model_.describe() + " (" +
                          std::to_string(model_.parameterCount()) + " parameters)",
                      at_.step);
  }
}

void TrainingRun::placeModel() {
  const size_t parameters = model_.parameterCount();
  if (const ModelBuffers shared = sync_->placeModel(model_.params(), parameters); shared.params)
    model_.useBuffers(shared.params, shared.grads);
  if (ShardedState* shards = sync_->sharded()) {
    // ZeRO 2 and 3: no flat gradient (and parameters), one layer's at a time.
    if (float* scratch = shards->gradientScratch(model_.largestLayerParameters()))
      model_.useGradientScratch(scratch);
    if (float* scratch = shards->parameterScratch(model_.largestLayerParameters())) {
      model_.useParameterScratch(scratch, [shards](size_t offset, size_t count) {
        shards->gatherParameters(offset, count);
      });
    }
    if (!model_.grads()) {
      model_.holdLayersUsedOutsideTheirTurn([shards](size_t offset, size_t count) {
        const ModelBuffers held = shards->holdLayer(offset, count);
        return HeldLayer{held.params, held.grads};
      });
    }
  }
  update_range_ = sync_->updateRange(parameters);
  if (PieceUpdates* pieces = sync_->pieceUpdates()) {
    // Priority scheduling: each piece is updated on the communication thread as it arrives,
    // and a layer's forward waits for its own pieces alone.
    pieces->setPieceUpdate([this](const float* grads, ParamRange piece, double lr, bool first) {
      if (first) optimizer_->countStep();
      optimizer_->updateRange(model_.params(), grads, lr, piece);
    });
    model_.gateParameters(
        [pieces](size_t offset, size_t count) { pieces->awaitParameters(offset, count); });
  }
  sync_->start(model_.params(), parameters);
}

void TrainingRun::resizedFrom(int saved_world) {
  at_.step_in_epoch = std::min(at_.step_in_epoch, steps_per_epoch_);
  const int64_t left = stepsLeftIn(at_.epoch) + steps_per_epoch_ * (job_.train.epochs - at_.epoch);
  total_steps_ = at_.step + left;
  if (job_.train.max_steps > 0) total_steps_ = std::min(total_steps_, job_.train.max_steps);
  if (peers_.rank() != 0) return;
  observer_.onEvent(
      "elastic",
      "world " + std::to_string(saved_world) + " -> " + std::to_string(peers_.size()) +
          " ranks: epoch " + std::to_string(at_.epoch) + " goes on at step " +
          std::to_string(at_.step_in_epoch) + " of its " + std::to_string(steps_per_epoch_) +
          "; the global batch is now " +
          std::to_string(job_.train.batch_size * layout_->degrees().data) + " samples",
      at_.step);
}

int64_t TrainingRun::stepsLeftIn(int epoch) const {
  return steps_per_epoch_ - (epoch == at_.epoch ? at_.step_in_epoch : 0);
}

StepStats TrainingRun::step(int epoch) {
  StepStats s;
  s.step = at_.step + 1;
  s.epoch = epoch;
  // A replica's samples are counted once: by its last stage, by its first tensor slice.
  const LayoutCoords& at = layout_->coords();
  const bool counts_samples = at.stage == layout_->degrees().pipeline - 1 && at.slice == 0;
  if (tensor_) tensor_->take();  // the warm-up's or an evaluation's are not this step's
  s.samples = counts_samples ? job_.train.batch_size * job_.train.accumulate_steps : 0;
  s.lr = lr_->at(s.step);
  const int64_t in_epoch = epoch == at_.epoch ? at_.step_in_epoch : 0;
  const int every = job_.telemetry.span_every;
  const bool traced = every > 0 && s.step % every == 0;
  sync_->traceSpans(traced ? &comm_spans_ : nullptr);
  model_.traceDevice(traced ? &device_trace_ : nullptr);
  sync_->startStep();
  bool overflow = forwardBackward(s);
  if (scaler_) {
    // Every rank skips together: one rank's inf would reach every rank through the sum.
    const int64_t t = steadyNowNs();
    overflow = onAnyRank(peers_, overflow);
    s.wait_ns += steadyNowNs() - t;
    if (peers_.size() > 1) ++s.allreduces;
  }
  // Before an evaluation, a checkpoint or the end, no piece may still be moving: its
  // communication belongs to this step's record.
  const int64_t saves = job_.train.checkpoint_every;
  const bool pauses = s.step == total_steps_ || in_epoch + 1 == steps_per_epoch_ ||
                      (saves > 0 && s.step % saves == 0);
  if (overflow)
    skipOverflowedStep(s);
  else
    syncAndUpdate(s, pauses);
  recordTensorParallel(s);
  recordMemory(s);
  DeviceSpans device_spans;
  if (traced) {
    sync_->traceSpans(nullptr);  // a checkpoint's collectives are not this step's
    model_.traceDevice(nullptr);
    device_spans = device_trace_.take();
  }
  observer_.onStep(s);  // first: the step's record is stamped with its end
  if (!comm_spans_.empty()) observer_.onCommSpans(s.step, comm_spans_);
  if (!device_spans.empty()) observer_.onDeviceSpans(s.step, device_spans);
  comm_spans_.clear();
  at_ = {s.step, epoch, in_epoch + 1};
  return s;
}

bool TrainingRun::forwardBackward(StepStats& s) {
  // Gradient accumulation: k batches' passes add up before the one sync and update.
  const int k = job_.train.accumulate_steps;
  for (int i = 0; i < k; ++i) {
    const int64_t t = steadyNowNs();
    const Batch* batch = batches_->next();
    s.data_ns += steadyNowNs() - t;
    runPasses(s, *batch, i == 0, i + 1 == k);
  }
  settleBeforeSharding(s);
  const int64_t t = steadyNowNs();
  if (straggler_)
    std::this_thread::sleep_for(std::chrono::milliseconds(job_.fault.straggler_delay_ms));
  if (job_.fault.moving_straggler_ms > 0 &&
      movingStragglerAt(job_, at_.step + 1, peers_.size()) == peers_.rank())
    std::this_thread::sleep_for(std::chrono::milliseconds(job_.fault.moving_straggler_ms));
  bool overflow = false;
  if (scaler_) {
    s.loss_scale = scaler_->scale();
    overflow = !unscaleGradients();
  }
  s.backward_ns += steadyNowNs() - t;
  return overflow;
}

void TrainingRun::runPasses(StepStats& s, const Batch& batch, bool first, bool last) {
  const int k = job_.train.accumulate_steps;
  StepHooks hooks;
  if (first) hooks.before_backward = [&] { sync_->beginStep(s.lr); };
  if (last) hooks.on_ready = on_ready_;
  hooks.accumulate = !first;
  // Each batch's mean loss weighted 1/k: the gradients add up to the mean over all k.
  const float scale = (scaler_ ? scaler_->scale() : 1.f) / static_cast<float>(k);
  const PassTimes times = schedule_->run(model_, batch, scale, hooks);
  // Per scored position: a sample's, or each token's (nats per token).
  s.loss += times.loss_sum /
            (static_cast<double>(job_.train.batch_size) * k * test_set_.labels_per_sample);
  s.forward_ns += times.forward_ns;
  s.backward_ns += times.backward_ns;
  s.wait_ns += times.wait_ns;
  // Activations and their gradients go uncompressed: raw as sent.
  s.bytes_tx += times.bytes_tx;
  s.bytes_pipeline += times.bytes_tx;
  s.bytes_rx += times.bytes_rx;
  s.bytes_raw += times.bytes_tx;
  s.stashed = std::max<int64_t>(s.stashed, times.stashed_peak);
  s.stashed_bytes = std::max(s.stashed_bytes, times.stashed_bytes_peak);
  s.sends += times.sends;
  s.recvs += times.recvs;
  s.allreduces += times.allreduces;
  // A pipeline's passes, "F3" and "B3" for micro-batch 3: the timeline draws the schedule.
  for (const PassSpan& pass : times.passes) {
    observer_.onSpan((pass.forward ? "F" : "B") + std::to_string(pass.micro), s.step, pass.start_ns,
                     pass.end_ns);
  }
}

namespace {

// A loss scale as text: 65536, or 1.84467e+19 where an int64 cast would overflow.
std::string scaleText(double scale) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", scale);
  return text;
}

}  // namespace

bool TrainingRun::unscaleGradients() {
  if (model_.grads()) return scaler_->unscale(model_.grads(), model_.parameterCount(), device_);
  // ZeRO 2 and 3 keep no whole gradient: each rank unscales the shard its reduce-scatters
  // summed (an inf on any rank reaches that sum). The scale is a power of 2, which commutes
  // with rounding: the bits are those of unscaling every rank's gradient before the sum.
  float* shard = sync_->sharded()->shardGradients(nullptr);
  return scaler_->unscale(shard, update_range_.end - update_range_.begin, device_);
}

void TrainingRun::skipOverflowedStep(StepStats& s) {
  s.overflow = true;
  // The tied copies' sum before ZeRO moved its bytes too (counted as the pipeline's).
  SyncStats moved = std::exchange(tied_before_sync_, {});
  // Under ZeRO 2 and 3 the skipped step's per-layer reduce-scatters did move bytes.
  if (!model_.grads()) moved += sync_->sync(nullptr, model_.parameterCount());
  s.bytes_tx += moved.bytes_tx;
  s.bytes_rx += moved.bytes_rx;
  s.bytes_raw += moved.bytes_raw;
  s.comm_ns = moved.comm_ns;
  s.reduce_scatters = moved.reduce_scatters;
  scaler_->update(true);
  observer_.onEvent("overflow",
                    "inf/NaN in the gradients: update skipped, loss scale " +
                        scaleText(s.loss_scale) + " -> " + scaleText(scaler_->scale()),
                    s.step);
}

double TrainingRun::measureGradient(StepStats& s) {
  if (sync_->updatesParameters() || sync_->pieceUpdates()) return 0;
  ShardedState* shards = sync_->sharded();
  const size_t count = update_range_.end - update_range_.begin;
  if (!shards && count < model_.parameterCount()) return 0;  // shm-sharded's chunk
  float* grads = shards ? shards->shardGradients(model_.grads()) : model_.grads();
  return norm_->measureAndClip(model_, grads, update_range_.begin, count, device_, s.allreduces);
}

void TrainingRun::settleBeforeSharding(StepStats& s) {
  ShardedState* shards = sync_->sharded();
  if (!shards) return;
  // The loss scale is a power of 2 and equal on every rank: summing the scaled copies gives
  // the bits of summing them unscaled.
  if (tied_table_) tied_before_sync_ = sumTiedTable(s);
  shards->reduceHeldLayers();
}

void TrainingRun::syncAndUpdate(StepStats& s, bool settle) {
  // A GPT's two copies of its token table add each other's gradient: after the data-parallel
  // sum (whose buckets may already be moving), or before ZeRO's (settleBeforeSharding),
  // after which each rank holds a shard alone. Sums commute, so both give each copy the
  // same update.
  SyncStats sync = std::exchange(tied_before_sync_, {});
  sync += sync_->sync(model_.grads(), model_.parameterCount());
  if (tied_table_ && !sync_->sharded()) sync += sumTiedTable(s);
  s.forward_ns -= std::min(s.forward_ns, sync.inside_forward_ns);
  s.backward_ns -= std::min(s.backward_ns, sync.inside_backward_ns);
  const int64_t t = steadyNowNs();
  s.grad_norm = measureGradient(s);
  // A sampled step's update, where this rank runs one (not a server's, not priority pieces').
  DeviceTrace* trace = sync_->updatesParameters() ? nullptr : model_.deviceTrace();
  if (trace) trace->begin("dev-update");
  update(s.lr);
  if (trace) trace->end();
  device_.synchronize();  // a GPU's update is queued: its time is the update's, not forward's
  if (scaler_) scaler_->update(false);
  s.update_ns = steadyNowNs() - t;
  sync += sync_->afterUpdate(model_.params(), model_.parameterCount());
  if (PieceUpdates* pieces = sync_->pieceUpdates(); pieces && settle) sync += pieces->settle();
  s.wait_ns += sync.wait_ns;
  s.comm_ns = sync.comm_ns;
  s.comm_hidden_ns = sync.hidden_ns;
  s.bytes_tx += sync.bytes_tx;
  s.bytes_rx += sync.bytes_rx;
  s.bytes_raw += sync.bytes_raw;
  s.compress_ns = sync.compress_ns;
  s.staleness = sync.staleness;
  s.allreduces += sync.allreduces;
  s.reduce_scatters = sync.reduce_scatters;
  s.all_gathers = sync.all_gathers;
  s.sends += sync.sends;
  s.recvs += sync.recvs;
}

SyncStats TrainingRun::sumTiedTable(StepStats& s) {
  const SyncStats tied = tied_table_->sum(model_, device_);
  s.bytes_pipeline += tied.bytes_tx;
  s.comm_pipeline_ns += tied.comm_ns;
  return tied;
}

void TrainingRun::update(double lr) {
  if (!sharded_) {
    if (!sync_->updatesParameters())
      optimizer_->stepRange(model_.params(), model_.grads(), lr, update_range_);
    return;
  }
  // ZeRO: this rank's shard, from its gradients; under stage 3 the shard is all it holds.
  ShardedState& shards = *sync_->sharded();
  const float* grads = shards.shardGradients(model_.grads());
  if (float* own = shards.shardParameters())
    sharded_->stepOwn(own, grads, lr);
  else
    sharded_->stepShard(model_.params(), grads, lr);
}

void TrainingRun::recordTensorParallel(StepStats& s) {
  if (!tensor_) return;
  const TensorParallelCounts c = tensor_->take();
  s.forward_ns -= std::min(s.forward_ns, c.forward_ns);
  s.backward_ns -= std::min(s.backward_ns, c.backward_ns);
  s.comm_ns += c.forward_ns + c.backward_ns;
  s.comm_tensor_ns += c.forward_ns + c.backward_ns;
  s.allreduces += c.allreduces;
  s.reduce_scatters += c.reduce_scatters;
  s.all_gathers += c.all_gathers;
  s.bytes_tx += c.bytes_tx;
  s.bytes_tensor += c.bytes_tx;
  s.bytes_raw += c.bytes_tx;
  s.bytes_rx += c.bytes_rx;
}

void TrainingRun::recordMemory(StepStats& s) const {
  const auto bytes = [](size_t n) { return static_cast<int64_t>(n); };
  const ShardedState* shards = sync_->sharded();
  s.mem_params = bytes(model_.flatParameterBytes() + (shards ? shards->parameterBytesHeld() : 0));
  s.mem_grads = bytes(model_.flatGradientBytes() + (shards ? shards->gradientBytesHeld() : 0));
  s.mem_optimizer = bytes(optimizer_->stateBytes());
  s.mem_buffers = bytes(sync_->bufferBytesHeld());
  // What the layers hold for backward; a pipeline's copies of its stage each their own.
  s.mem_activations = 0;
  for (const LayerMemory& layer : schedule_->memoryPerLayer(model_))
    s.mem_activations += bytes(layer.activations);
}

bool TrainingRun::checkpointDue() const {
  const int64_t every = job_.train.checkpoint_every;
  return every > 0 && at_.step % every == 0 && !finished() && checkpointed_step_ != at_.step;
}

void TrainingRun::checkpoint() {
  observer_.onPause();
  saveCheckpointNow();
}

void TrainingRun::saveCheckpointNow() {
  // A stop between steps: the pieces still moving are this state's.
  if (PieceUpdates* pieces = sync_->pieceUpdates()) pieces->settle();
  const int64_t start = steadyNowNs();
  saveCheckpoint(job_, compression_, runParts(), at_, observer_);
  observer_.onSpan("checkpoint", at_.step, start, steadyNowNs());
  checkpointed_step_ = at_.step;
}

RunParts TrainingRun::runParts() {
  return {peers_, *layout_, part_map_, *sync_, model_, *optimizer_, scaler_ ? &*scaler_ : nullptr};
}

bool TrainingRun::evaluationDue() const {
  const int64_t every = job_.train.eval_every;
  return every > 0 && at_.step % every == 0 && !finished() && stepsLeftIn(at_.epoch) > 0;
}

EvalStats TrainingRun::evaluate(int epoch, bool inside_epoch) {
  observer_.onPause();
  const int64_t t = steadyNowNs();
  sync_->refresh(model_.params(), model_.parameterCount());
  // A sequence model's windows hold far more activations each: its own batch size.
  const int eval_batch = test_set_.labels_per_sample > 1 ? job_.train.batch_size : 256;
  const int64_t limit = inside_epoch ? int64_t{job_.train.eval_batches} * eval_batch : int64_t{0};
  last_eval_ = evaluateOn(model_, *schedule_, *layout_, peers_, test_set_, eval_batch, limit);
  last_eval_.step = at_.step;
  last_eval_.epoch = epoch;
  writeSample();
  const int64_t end = steadyNowNs();
  eval_ns_ += end - t;
  observer_.onSpan("evaluate", at_.step, t, end);
  observer_.onEval(last_eval_);
  return last_eval_;
}

void TrainingRun::writeSample() {
  const int chars = job_.train.sample_chars;
  // The first replica's ranks all draw it (their forwards sum across slices and pass
  // through stages), and under ZeRO 3 every replica (each layer's parameters are gathered
  // from all of them); rank 0 tells.
  const bool replicas_gather = job_.parallel.zero == 3;
  if (job_.model.kind != ModelKind::kGpt || chars == 0 ||
      (layout_->coords().data != 0 && !replicas_gather))
    return;
  const uint64_t seed = static_cast<uint64_t>(job_.train.seed) * 1000003 + at_.step;
  const std::string text = job_.parallel.pipeline > 1 ? sampleThroughStages(chars, seed)
                                                      : sampleText(model_, "\n", chars, seed);
  if (peers_.rank() == 0) observer_.onEvent("sample", text, at_.step);
}

std::string TrainingRun::sampleThroughStages(int chars, uint64_t seed) {
  const int vocab = test_set_.classes;
  SplitTextModel split{job_.model.context, vocab, nullptr, nullptr};
  split.next = [this, vocab](const float* window, int last, float* logits) {
    const float* out = schedule_->predict(model_, window, 1);
    if (out) device_.download(logits, out + static_cast<size_t>(last) * vocab, vocab);
    return out != nullptr;
  };
  // The last stage drew the byte: the sum over the stages, where the others add 0.
  split.share = [this](int drawn) {
    float byte = drawn >= 0 ? static_cast<float>(drawn) : 0.f;
    layout_->pipelineGroup().allreduceSumNative(&byte, 1);
    return static_cast<int>(byte);
  };
  return sampleText(split, "\n", chars, seed);
}

TrainResult TrainingRun::finish() {
  if (!job_.train.checkpoint_path.empty() && checkpointed_step_ != at_.step) saveCheckpointNow();
  sync_->finish();
  TrainResult result;
  result.steps = at_.step;
  result.train_ns = steadyNowNs() - loop_start_ns_ - eval_ns_;
  result.last_eval = last_eval_;
  return result;
}

}  // namespace ranklab
