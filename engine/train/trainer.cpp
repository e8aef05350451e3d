#include "engine/train/trainer.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>
#include <vector>

#include "engine/amp/loss_scaler.h"
#include "engine/data/batch_stream.h"
#include "engine/data/shard_loader.h"
#include "engine/model/models.h"
#include "engine/optim/lr_schedule.h"
#include "engine/optim/optimizer.h"
#include "engine/train/checkpoint.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/sharded_optimizer_state.h"
#include "kernels/cpu/mixed_gemm.h"

namespace ranklab {

namespace {

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Shape sampleShape(const Dataset& data) {
  return {data.height, data.width, data.features / (data.height * data.width)};
}

// The weight tensors inside the flat buffer as matrices (output features, the rest), for
// codecs that use shapes: a Linear weight is (out, in), a Conv2d kernel (out, in*k*k).
std::vector<MatrixBlock> weightMatrices(const Network& model) {
  std::vector<MatrixBlock> blocks;
  for (const auto& view : model.views()) {
    const std::string suffix = ".weight";
    if (view.name.size() <= suffix.size() ||
        view.name.compare(view.name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string layer = view.name.substr(0, view.name.size() - suffix.size());
    for (const auto& l : model.layers()) {
      if (l->name() != layer) continue;
      const int rows = l->outputShape().channels;
      if (rows > 0 && view.size % rows == 0) {
        blocks.push_back({view.offset, rows, static_cast<int>(view.size / rows)});
      }
    }
  }
  return blocks;
}

// True when `local` holds on any rank (one tiny all-reduce).
bool onAnyRank(Communicator& comm, bool local) {
  if (comm.size() == 1) return local;
  float flag = local ? 1.f : 0.f;
  comm.allreduceSumNative(&flag, 1);
  return flag > 0.f;
}

// Test loss and accuracy over the whole test set: each rank scores its slice, then sum.
EvalStats evaluate(Network& model, Communicator& comm, const Dataset& test, int batch) {
  const int64_t begin = test.count * comm.rank() / comm.size();
  const int64_t end = test.count * (comm.rank() + 1) / comm.size();
  const BatchLoss part =
      model.evaluate(test.image(begin), test.labels.data() + begin, end - begin, batch);
  float totals[3] = {static_cast<float>(part.loss_sum), static_cast<float>(part.correct),
                     static_cast<float>(end - begin)};
  comm.allreduceSumNative(totals, 3);
  EvalStats stats;
  stats.test_loss = totals[2] > 0 ? totals[0] / totals[2] : 0;
  stats.test_accuracy = totals[2] > 0 ? totals[1] / totals[2] : 0;
  return stats;
}

// One forward and backward pass on a zero batch before the clock starts. The GEMM library
// (oneDNN) compiles a kernel for each shape on its first call: ~25 ms per rank, twice that
// when two ranks compile at once, which step 1 used to pay. Leaves the model as it was:
// no update, the dropout pass count restored, the gradients discarded by a zeroGrads().
void warmUpKernels(Network& model, int batch) {
  const std::vector<float> images(static_cast<size_t>(batch) * model.inputShape().size(), 0.f);
  const std::vector<uint8_t> labels(static_cast<size_t>(batch), 0);
  const uint64_t passes = model.trainingPasses();
  model.forward(images.data(), labels.data(), batch);
  model.zeroGrads();
  model.backward(images.data(), labels.data(), batch);
  model.zeroGrads();
  model.setTrainingPasses(passes);
}

// Where a run stands: the last completed step, counted overall and within its epoch.
struct Position {
  int64_t step = 0;
  int epoch = 1;
  int64_t step_in_epoch = 0;
};

std::string mismatch(const std::string& path, const std::string& what, const std::string& saved,
                     const std::string& job) {
  return path + ": the checkpoint's " + what + " is " + saved + ", this job's is " + job +
         "; a run continues exactly only with the same " + what;
}

// Restores model, optimizer, dropout stream and (with AMP) the loss scale from
// train.resume_from; returns where the run was.
Position resume(const JobSpec& job, const Checkpoint& c, const Communicator& comm, Network& model,
                Optimizer& optimizer, LossScaler* scaler) {
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
  if (c.world != comm.size()) {
    throw CheckpointError(mismatch(path, "world size (parallel.ranks)", std::to_string(c.world),
                                   std::to_string(comm.size())));
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
  std::copy(c.params.begin(), c.params.end(), model.params());
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
  return {c.step, c.epoch, c.step_in_epoch};
}

// After gradient_sync.start(): this rank's compression state from the checkpoint. Warns,
// naming the job keys, about state the checkpoint does not hold (the run then differs).
void resumeCompression(const JobSpec& job, const Checkpoint& c, const Communicator& comm,
                       GradientSync& sync, TrainObserver& observer, int64_t step) {
  const std::string& path = job.train.resume_from;
  const std::string compression = describeCompression(codecOptions(job));
  if (c.version >= 2 && c.compression != compression)
    throw CheckpointError(mismatch(path, "compression", c.compression, compression));
  std::string missing = sync.stateNotCheckpointed();
  if (c.version < 2 && compression != "none") {
    missing =
        "compression.codec, compression.error_feedback, "
        "compression.momentum_correction (a version-1 checkpoint holds no codec state)";
  } else if (static_cast<size_t>(comm.rank()) < c.codec_states.size()) {
    try {
      sync.restoreCodecState(c.codec_states[comm.rank()]);
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

constexpr int kCodecStateTag = 0x7c4b;  // rank -> rank 0: a checkpoint's compression state

// Every rank's compression state on rank 0, in rank order (empty on the other ranks).
std::vector<CodecState> gatherCodecStates(Communicator& comm, const GradientSync& sync) {
  const std::vector<uint8_t> own = toBytes(sync.saveCodecState());
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

void saveCheckpoint(const JobSpec& job, Communicator& comm, const GradientSync& sync,
                    const Network& model, const Optimizer& optimizer, const LossScaler* scaler,
                    const Position& at, TrainObserver& observer) {
  // Compression state differs per rank: rank 0 gathers it and writes one file.
  std::vector<CodecState> codec_states;
  if (job.compression.codec != "none") codec_states = gatherCodecStates(comm, sync);
  // So does the optimizer state of ranks that each update a slice of one shared model.
  const ParamRange own = sync.updateRange(model.parameterCount());
  const bool sliced = onAnyRank(comm, own.begin != 0 || own.end != model.parameterCount());
  OptimizerState optimizer_state =
      sliced ? gatherOptimizerState(comm, optimizer, own) : optimizer.state();
  // Synchronous data parallel keeps every other part identical: rank 0 speaks for all.
  if (comm.rank() != 0) return;
  Checkpoint c;
  c.compression = describeCompression(codecOptions(job));
  c.codec_states = std::move(codec_states);
  c.model = model.describe();
  c.params.assign(model.params(), model.params() + model.parameterCount());
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

}  // namespace

TrainResult train(const JobSpec& job, Communicator& comm, const Dataset& train_set,
                  const Dataset& test_set, TrainObserver& observer) {
  Network model = makeModel(job.model, sampleShape(train_set), train_set.classes, job.train.seed);
  model.setDropoutStream(job.train.seed, comm.rank());
  // With momentum correction the gradient sync applies the momentum, before compression.
  TrainSpec update_rule = job.train;
  if (compressesWithMomentum(job)) update_rule.momentum = 0;
  auto optimizer = makeOptimizer(update_rule, model.parameterCount());
  auto gradient_sync = makeGradientSync(job, comm, weightMatrices(model));
  Communicator& peers = gradient_sync->peers();  // the ranks that train
  // AMP: low-precision products, fp32 master weights, dynamic loss scaling.
  const kernels::Precision precision = kernels::parsePrecision(job.amp.dtype);
  model.setPrecision(precision, job.amp.head_fp32);
  std::optional<LossScaler> scaler;
  if (precision != kernels::Precision::kFp32) {
    LossScalerOptions options;
    options.init_scale = static_cast<float>(job.amp.init_scale);
    options.growth_interval = job.amp.growth_interval;
    scaler.emplace(options);
  }
  ShardLoader loader(train_set, peers.rank(), peers.size(), job.train.batch_size, job.train.seed);
  if (loader.stepsPerEpoch() == 0) {
    throw std::invalid_argument("train.batch_size " + std::to_string(job.train.batch_size) + " x " +
                                std::to_string(peers.size()) + " ranks exceeds the " +
                                std::to_string(train_set.count) + " training samples");
  }
  const int64_t planned_steps = loader.stepsPerEpoch() * job.train.epochs;
  const int64_t total_steps =
      job.train.max_steps > 0 ? std::min(job.train.max_steps, planned_steps) : planned_steps;
  // The schedule spans the planned epochs; max_steps only stops early (so a run cut short
  // and resumed follows the same curve).
  const LrSchedule schedule(job.train, loader.stepsPerEpoch(), planned_steps);
  Position at;
  std::optional<Checkpoint> saved;
  if (!job.train.resume_from.empty()) {
    saved = readCheckpoint(job.train.resume_from);
    at = resume(job, *saved, peers, model, *optimizer, scaler ? &*scaler : nullptr);
    observer.onEvent(
        "checkpoint",
        "resumed from " + job.train.resume_from + " after step " + std::to_string(at.step),
        at.step);
  }
  const size_t parameters = model.parameterCount();
  if (const ModelBuffers shared = gradient_sync->placeModel(model.params(), parameters);
      shared.params) {
    model.useBuffers(shared.params, shared.grads);
  }
  const ParamRange update_range = gradient_sync->updateRange(parameters);
  gradient_sync->start(model.params(), parameters);
  if (saved) resumeCompression(job, *saved, peers, *gradient_sync, observer, at.step);
  saved.reset();
  const bool straggler =
      peers.rank() == job.fault.straggler_rank && job.fault.straggler_delay_ms > 0;
  if (straggler) {
    observer.onEvent("fault",
                     "straggler: +" + std::to_string(job.fault.straggler_delay_ms) +
                         " ms per step on rank " + std::to_string(peers.rank()),
                     at.step);
  }

  // Each layer's finished gradient may start moving while backward goes on (bucketing);
  // not under AMP, whose gradients are unscaled and checked only after backward.
  const GradientReadyFn on_ready =
      scaler ? GradientReadyFn{} : GradientReadyFn([&](size_t offset, size_t count) {
        gradient_sync->gradientReady(model.grads(), offset, count);
      });
  const int batch = job.train.batch_size;
  BatchStream batches(loader, train_set.features, at.epoch, at.step_in_epoch, job.train.epochs,
                      job.data.prefetch);
  TrainResult result;
  result.steps = at.step;
  int64_t eval_ns = 0;
  int64_t checkpointed_step = at.step;
  warmUpKernels(model, batch);
  // Start the clock together: start-up skew (data loading, MPI wire-up, kernel compilation)
  // is not training.
  peers.barrier();
  const int64_t loop_start = nowNs();
  bool stop = at.step >= total_steps;
  for (int epoch = at.epoch; epoch <= job.train.epochs && !stop; ++epoch) {
    const int64_t first = epoch == at.epoch ? at.step_in_epoch : 0;
    for (int64_t i = first; i < loader.stepsPerEpoch() && !stop; ++i) {
      StepStats s;
      s.step = ++result.steps;
      s.epoch = epoch;
      s.samples = batch;
      s.lr = schedule.at(s.step);
      int64_t t = nowNs();
      const Batch* next = batches.next();
      s.data_ns = nowNs() - t;

      t = nowNs();
      const BatchLoss loss = model.forward(next->images.data(), next->labels.data(), batch);
      s.loss = loss.loss_sum / batch;
      s.forward_ns = nowNs() - t;

      t = nowNs();
      if (scaler) model.setLossScale(scaler->scale());
      model.zeroGrads();
      gradient_sync->beginStep(s.lr);
      model.backward(next->images.data(), next->labels.data(), batch, on_ready);
      if (straggler)
        std::this_thread::sleep_for(std::chrono::milliseconds(job.fault.straggler_delay_ms));
      bool overflow = false;
      if (scaler) {
        s.loss_scale = scaler->scale();
        overflow = !scaler->unscale(model.grads(), model.parameterCount());
      }
      s.backward_ns = nowNs() - t;

      if (scaler) {
        // Every rank skips together: one rank's inf would reach every rank through the sum.
        t = nowNs();
        overflow = onAnyRank(peers, overflow);
        s.wait_ns += nowNs() - t;
      }
      if (overflow) {
        s.overflow = true;
        scaler->update(true);
        observer.onEvent("overflow",
                         "inf/NaN in the gradients: update skipped, loss scale " +
                             std::to_string(static_cast<int64_t>(s.loss_scale)) + " -> " +
                             std::to_string(static_cast<int64_t>(scaler->scale())),
                         s.step);
      } else {
        SyncStats sync = gradient_sync->sync(model.grads(), model.parameterCount());

        t = nowNs();
        if (!gradient_sync->updatesParameters())
          optimizer->stepRange(model.params(), model.grads(), s.lr, update_range);
        if (scaler) scaler->update(false);
        s.update_ns = nowNs() - t;
        sync += gradient_sync->afterUpdate(model.params(), model.parameterCount());
        s.wait_ns += sync.wait_ns;
        s.comm_ns = sync.comm_ns;
        s.comm_hidden_ns = sync.hidden_ns;
        s.bytes_tx = sync.bytes_tx;
        s.bytes_rx = sync.bytes_rx;
        s.bytes_raw = sync.bytes_raw;
        s.compress_ns = sync.compress_ns;
        s.staleness = sync.staleness;
      }
      observer.onStep(s);
      at = {s.step, epoch, i + 1};
      stop = s.step >= total_steps;
      const int64_t every = job.train.checkpoint_every;
      if (every > 0 && s.step % every == 0 && !stop) {
        observer.onPause();
        saveCheckpoint(job, peers, *gradient_sync, model, *optimizer, scaler ? &*scaler : nullptr,
                       at, observer);
        checkpointed_step = s.step;
      }
    }
    observer.onPause();
    const int64_t t = nowNs();
    gradient_sync->refresh(model.params(), model.parameterCount());
    result.last_eval = evaluate(model, peers, test_set, 256);
    result.last_eval.step = result.steps;
    result.last_eval.epoch = epoch;
    eval_ns += nowNs() - t;
    observer.onEval(result.last_eval);
  }
  if (!job.train.checkpoint_path.empty() && checkpointed_step != at.step) {
    saveCheckpoint(job, peers, *gradient_sync, model, *optimizer, scaler ? &*scaler : nullptr, at,
                   observer);
  }
  gradient_sync->finish();
  result.train_ns = nowNs() - loop_start - eval_ns;
  return result;
}

}  // namespace ranklab
