// How ranks combine what they learned each step. One strategy per class (allreduce_sync,
// local_sgd_sync, ps_worker_sync); the trainer calls them at fixed points of a step:
// start once, beginStep and gradientReady during backward, sync after backward,
// afterUpdate after the optimizer, refresh before an evaluation, finish at the end. The
// core below is what every strategy answers; what only some add (ZeRO's shards, priority
// scheduling's piece-wise update, checkpointed codec state) is a capability it hands out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/collectives/allreduce.h"
#include "comm/communicator.h"
#include "engine/job/job_spec.h"
#include "engine/optim/optimizer.h"

namespace ranklab {

struct SyncStats {
  int64_t wait_ns = 0;    // blocked on a slower peer (a barrier, a reply the server held)
  int64_t comm_ns = 0;    // moving and reducing bytes
  int64_t hidden_ns = 0;  // the part of comm_ns that ran while backward still computed
  // wait_ns + comm_ns spent on the compute thread inside forward and backward (ZeRO's
  // per-layer all-gathers and reduce-scatters): the passes' times exclude it.
  int64_t inside_forward_ns = 0;
  int64_t inside_backward_ns = 0;
  int64_t bytes_tx = 0;
  int64_t bytes_rx = 0;
  int64_t bytes_raw = 0;    // what the same collective would have sent uncompressed
  int64_t compress_ns = 0;  // encoding, decoding, error feedback (inside comm time's span)
  int64_t staleness = 0;    // ps-async: updates the server applied since this rank's last pull
  // Collectives this rank took part in (the step record's counts).
  int64_t allreduces = 0;
  int64_t reduce_scatters = 0;
  int64_t all_gathers = 0;
  int64_t sends = 0;  // point to point: messages sent and received (a parameter server's)
  int64_t recvs = 0;

  SyncStats& operator+=(const SyncStats& other);
};

// One compressed all-reduce of `count` floats timed as a step records it: the barrier
// before it as waiting for a slow peer, then `run` (which fills in the bytes it moved and
// its compress_ns) as moving bytes less that compress_ns; on more than one rank, one
// all-reduce whose uncompressed ring would have sent bytes_raw.
SyncStats timeCompressedAllreduce(Communicator& comm, size_t count,
                                  const std::function<void(SyncStats&)>& run);

// Updates params[piece] from grads[piece] at `lr`; `first` for a step's first piece (the
// optimizer counts the step then).
using PieceUpdateFn =
    std::function<void(const float* grads, ParamRange piece, double lr, bool first)>;

// Where a model's flat parameter and gradient buffers live; null: where they are.
struct ModelBuffers {
  float* params = nullptr;
  float* grads = nullptr;
};

// ZeRO's capability: the ranks share one copy of the model state and each owns a shard
// (updateRange()). This rank's optimizer holds state for its shard alone: the trainer
// builds it over that slice and steps it with shardGradients().
class ShardedState {
 public:
  virtual ~ShardedState() = default;
  // After sync(): updateRange()'s gradients, from its first.
  virtual float* shardGradients(float* grads) = 0;
  // Non-null: the model keeps no flat gradient; each layer writes its gradients here in
  // turn (largest_layer floats) and gradientReady() takes them before the next (ZeRO 2).
  virtual float* gradientScratch(size_t largest_layer) = 0;
  // Non-null: the model keeps no flat parameters; each layer reads its parameters from
  // here (largest_layer floats) after gatherParameters() filled them (ZeRO 3).
  virtual float* parameterScratch(size_t largest_layer) = 0;
  virtual void gatherParameters(size_t offset, size_t count) = 0;
  // Under the scratches, a layer whose tensors are used outside its turn (a GPT's token
  // table): buffers of its own that keep its gradients (and, under parameterScratch(), its
  // parameters once gathered) for the whole step; gradientReady() leaves it, and
  // reduceHeldLayers() reduces it after the trainer added what it adds (the tied copy's).
  virtual ModelBuffers holdLayer(size_t offset, size_t count) = 0;
  // After backward: the held layers' reduce-scatters (sync() runs any not yet run).
  virtual void reduceHeldLayers() = 0;
  // Under parameterScratch(): this rank's shard of the parameters, which its optimizer
  // updates, else null; and (collective) every parameter, for a checkpoint.
  virtual float* shardParameters() = 0;
  virtual void wholeParameters(float* into, size_t count) = 0;
  // Memory this rank holds for gradients and parameters besides the model's flat buffers,
  // and for one layer at a time (the gradient and parameter scratch).
  virtual size_t gradientBytesHeld() const = 0;
  virtual size_t parameterBytesHeld() const = 0;
};

// Priority scheduling's capability (parallel.comm_schedule): the sync runs the update
// itself, piece by piece as each piece's all-reduce ends, with the function it is given,
// and sync() returns before they all have: awaitParameters() then returns once the layer's
// slice is updated, and settle() once nothing is in flight, with the communication that
// ended since the last sync().
class PieceUpdates {
 public:
  virtual ~PieceUpdates() = default;
  virtual void setPieceUpdate(PieceUpdateFn update) = 0;
  virtual void awaitParameters(size_t offset, size_t count) = 0;
  virtual SyncStats settle() = 0;
};

// The step-to-step state a strategy keeps, as checkpoints see it.
class CheckpointState {
 public:
  virtual ~CheckpointState() = default;
  // This rank's compression state (comm/codecs/codec_state.h); empty when it keeps none.
  // restoreCodecState runs after start(); it throws std::invalid_argument naming the state
  // that is missing or of another size.
  virtual CodecState saveCodecState() const { return {}; }
  virtual void restoreCodecState(const CodecState& /*state*/) {}
  // The job keys whose step-to-step state a checkpoint does not hold, "" when it holds all:
  // a resumed run warns naming them.
  virtual std::string stateNotCheckpointed() const { return ""; }
};

class GradientSync {
 public:
  virtual ~GradientSync() = default;

  // The ranks that train together: they split the data and the evaluation. The world,
  // except under a parameter server, whose servers do not train.
  virtual Communicator& peers() = 0;

  // Once, before start(), with the initial parameters: memory the model's buffers move
  // into (params already holding those values on return), or {} to leave them.
  virtual ModelBuffers placeModel(const float* /*params*/, size_t /*count*/) { return {}; }
  // Once, before the first step, with the initial parameters (the same on every rank).
  virtual void start(float* /*params*/, size_t /*count*/) {}
  // Before the step's first forward pass.
  virtual void startStep() {}
  // Before backward, with the step's learning rate (servers apply it under ps-*).
  virtual void beginStep(double /*lr*/) {}
  // During backward: grads[offset, offset + count) are final and may start moving.
  virtual void gradientReady(float* /*grads*/, size_t /*offset*/, size_t /*count*/) {}
  // After backward: leaves grads ready for this rank's optimizer (e.g. the mean over ranks).
  virtual SyncStats sync(float* grads, size_t count) = 0;
  // The parameters this rank's optimizer updates after sync(): all, unless the ranks share
  // one copy and each updates a slice (the same range on every call).
  virtual ParamRange updateRange(size_t count) const { return {0, count}; }
  // Memory this rank holds for its strategy's buffers besides the model's flat ones.
  virtual size_t bufferBytesHeld() const { return 0; }
  // True when sync() already wrote the new parameters (a server ran the optimizer).
  virtual bool updatesParameters() const { return false; }
  // After the optimizer step (local SGD averages the models here).
  virtual SyncStats afterUpdate(float* /*params*/, size_t /*count*/) { return {}; }
  // Before an evaluation: params become the model every rank agrees on.
  virtual void refresh(float* /*params*/, size_t /*count*/) {}
  // After the last step.
  virtual void finish() {}
  // Non-null: the pieces of each later step's communication (ring hops, buckets) are
  // appended here, read after sync(); null stops it. Strategies without pieces record none.
  virtual void traceSpans(CommSpans* /*sink*/) {}

  // What some strategies add (each null where a strategy has none): ZeRO's shards, the
  // update run piece by piece under priority scheduling, state a checkpoint keeps.
  virtual ShardedState* sharded() { return nullptr; }
  virtual PieceUpdates* pieceUpdates() { return nullptr; }
  virtual CheckpointState* checkpointState() { return nullptr; }
};

// True when the compressed all-reduce applies the momentum (compression.momentum_correction,
// any codec but powersgd, plain SGD): the optimizer must then run without it.
bool compressesWithMomentum(const JobSpec& job);

// The job's [compression] section as codec options; `matrices` are the weight matrices
// inside the gradient buffer (PowerSGD compresses those).
CodecOptions codecOptions(const JobSpec& job, std::vector<MatrixBlock> matrices = {});

// The compression settings a codec's state depends on, e.g. "topk ratio=0.01 values=fp32
// error_feedback=1 momentum_correction=0.9"; "none" without a codec. Checkpoints compare it.
std::string describeCompression(const CodecOptions& options);

}  // namespace ranklab
