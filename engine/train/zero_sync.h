// ZeRO data parallel (parallel.zero = 1, 2 or 3; Rajbhandari et al., "ZeRO: Memory
// Optimizations Toward Training Trillion Parameter Models", 2020) over the data group, one
// algorithm whatever carries its bytes (GradientTransport: the host ring on the CPU, NCCL on
// GPUs, the host ring through host copies on a GPU without NCCL), its buffers in the model's
// device memory. Each rank owns a part of the flat parameters (the transport's owned(): the
// ring's chunk, NCCL's r-th) and holds optimizer state for it alone (ShardedOptimizer). Each
// step:
//  - stage 1: after backward the whole flat gradient is reduce-scattered; the owned chunk
//    becomes the mean; after the update the chunks of the parameters are all-gathered (NCCL
//    pads the model's two flat buffers to whole chunks so both run in place);
//  - stage 2: as 1, but the model keeps no flat gradient: each layer's gradients land in a
//    scratch the size of the largest layer and are reduce-scattered as soon as backward
//    finished them, the owned part kept in a gradient shard;
//  - stage 3: as 2, and the model keeps no flat parameters either: each rank holds its
//    chunk, and each layer's parameters are all-gathered into a scratch before its forward
//    and again before its backward, then overwritten by the next layer's.
// Stages 1 and 2 move what one ring all-reduce moves, stage 3 half as much again. Over the
// ring each element is summed in the ring's order, so the parameters are bit-equal to
// allreduce's ring.
// A layer used outside its turn (a GPT's token table, which its tied head reads last and
// differentiates first) keeps buffers of its own for the step (holdLayer): gathered once a
// step under stage 3, reduce-scattered after backward (reduceHeldLayers) rather than as
// backward finishes it.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "engine/model/device_memory.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/gradient_transport.h"

namespace ranklab {

class ZeroSync : public GradientSync, public ShardedState {
 public:
  // stage 1, 2 or 3 (throws std::invalid_argument otherwise); `transport` carries the
  // buffers of the model's device memory between its group's ranks.
  ZeroSync(int stage, std::unique_ptr<GradientTransport> transport);

  Communicator& peers() override { return comm_; }
  ModelBuffers placeModel(const float* params, size_t count) override;
  void start(float* params, size_t count) override;
  ParamRange updateRange(size_t count) const override;
  ShardedState* sharded() override { return this; }
  float* shardGradients(float* grads) override;
  float* gradientScratch(size_t largest_layer) override;
  float* parameterScratch(size_t largest_layer) override;
  void gatherParameters(size_t offset, size_t count) override;
  ModelBuffers holdLayer(size_t offset, size_t count) override;
  void reduceHeldLayers() override;
  float* shardParameters() override;
  void wholeParameters(float* into, size_t count) override;
  size_t gradientBytesHeld() const override;
  size_t parameterBytesHeld() const override;
  size_t bufferBytesHeld() const override;
  void startStep() override;
  void beginStep(double lr) override;
  void gradientReady(float* grads, size_t offset, size_t count) override;
  SyncStats sync(float* grads, size_t count) override;
  SyncStats afterUpdate(float* params, size_t count) override;
  void traceSpans(CommSpans* sink) override { collectives_->traceInto(sink); }

 private:
  using Buffer = std::unique_ptr<DeviceBuffer>;
  // A layer's buffers kept for the step (holdLayer).
  struct Held {
    size_t offset, count;
    Buffer params, grads;
    bool gathered = false;  // params hold this step's values
    bool reduced = false;   // grads went into the shard this step
  };
  Held* heldAt(size_t offset, size_t count);
  // A zeroed buffer of `floats` in the model's memory (one float where a rank owns none).
  Buffer allocate(size_t floats) const;
  static float* dataOf(const Buffer& b) { return b ? b->data() : nullptr; }
  // The model's flat buffers' length: count_, or padded to whole chunks (stage 1 on NCCL).
  size_t flatCount() const { return padded_grads_ ? padded_grads_->size() : count_; }

  // The step's first collective waits for every rank first (measured as wait).
  void waitForPeersOnce();
  // A per-layer collective's time (into forward or backward where `inside_pass`), its bytes.
  void countLayerCollective(int64_t start_ns, bool inside_pass = true);
  void countBytes(SyncStats& stats) const;
  // Layer [offset, offset + count)'s parameters into `window` from the owners' shards.
  void gatherWindow(float* window, size_t offset, size_t count);
  // Layer [offset, offset + count)'s gradients in `window`: the owned part's mean into the
  // gradient shard.
  void reduceWindow(float* window, size_t offset, size_t count, bool inside_pass);

  int stage_;
  std::unique_ptr<GradientTransport> collectives_;
  Communicator& comm_;
  const DeviceMemory& memory_;
  size_t count_ = 0;
  ParamRange own_;
  Buffer padded_params_;  // stage 1 where the transport pads: the model's flat buffers
  Buffer padded_grads_;
  Buffer scratch_;             // stage 2, 3: one layer's gradients
  Buffer shard_grads_;         // stage 2, 3: the owned chunk's mean gradient
  Buffer param_scratch_;       // stage 3: one layer's parameters
  Buffer shard_params_;        // stage 3: the owned chunk of the parameters
  std::deque<Held> held_;      // stage 2, 3: stable addresses as layers are held
  SyncStats pending_;          // the per-layer collectives of this step
  bool step_started_ = false;  // this step has waited for its peers
  bool in_backward_ = false;   // beginStep() came: collectives are backward's
};

}  // namespace ranklab
