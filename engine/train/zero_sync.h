// ZeRO data parallel (parallel.zero = 1 or 2; Rajbhandari et al., "ZeRO: Memory
// Optimizations Toward Training Trillion Parameter Models", 2020) over the data group.
// Each rank owns one ring chunk of the flat parameters (RingAllreduce::ownedChunk) and
// holds optimizer state for it alone (ShardedOptimizer). Each step:
//  - stage 1: after backward the whole flat gradient is reduce-scattered; the owned chunk
//    becomes the mean;
//  - stage 2: the model keeps no flat gradient: each layer's gradients land in a scratch
//    the size of the largest layer and are reduce-scattered as soon as backward finished
//    them, the owned part kept in a gradient shard;
// then the owner updates its chunk and the chunks of the parameters are all-gathered.
// A reduce-scatter and an all-gather move what one ring all-reduce moves, and each element
// is summed in the ring's order, so the parameters are bit-equal to allreduce's ring.
#pragma once

#include <memory>
#include <vector>

#include "comm/collectives/ring_allreduce.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

class ZeroSync : public GradientSync {
 public:
  // stage 1 or 2 (throws std::invalid_argument otherwise).
  ZeroSync(Communicator& comm, int stage);

  Communicator& peers() override { return comm_; }
  void start(float* params, size_t count) override;
  ParamRange updateRange(size_t count) const override;
  bool shardsOptimizerState() const override { return true; }
  const float* shardGradients(const float* grads) const override;
  float* gradientScratch(size_t largest_layer) override;
  size_t gradientBytesHeld() const override;
  void gradientReady(float* grads, size_t offset, size_t count) override;
  SyncStats sync(float* grads, size_t count) override;
  SyncStats afterUpdate(float* params, size_t count) override;

 private:
  // Stage 2: the step's first reduce-scatter waits for every rank first (measured as wait).
  void waitForPeersOnce();
  void countRing(SyncStats& stats) const;

  Communicator& comm_;
  int stage_;
  RingAllreduce ring_;
  size_t count_ = 0;
  ParamRange own_;
  std::vector<float> scratch_;      // stage 2: one layer's gradients
  std::vector<float> shard_grads_;  // stage 2: the owned chunk's mean gradient
  SyncStats pending_;               // stage 2: the reduce-scatters during backward
  bool step_started_ = false;
};

}  // namespace ranklab
