// ZeRO data parallel on GPUs (parallel.zero = 1, 2 or 3 with train.device = "cuda"): as
// ZeroSync (zero_sync.h), but gradients, parameters and optimizer state stay in GPU memory
// and cross ranks through NCCL, every rank on its own GPU. Rank r owns the chunk
// [r c, (r + 1) c) of the flat parameters, c = ceil(count / ranks), the chunks
// ncclReduceScatter and ncclAllGather give each rank. Each step:
//  - stage 1: the model's flat buffers are padded to ranks x c floats (placeModel); after
//    backward one ncclReduceScatter (mean) in place leaves the owned chunk's mean gradient,
//    and after the update one ncclAllGather in place hands every rank every chunk;
//  - stage 2: each layer's gradients land in a scratch the size of the largest layer and
//    are reduced (mean) to the owners of the chunks the layer spans (one ncclReduce per
//    owner, grouped) as backward finishes them; after the update every owner broadcasts
//    its chunk into the flat parameters (grouped: an all-gather of uneven shares);
//  - stage 3: as 2, and the model keeps no flat parameters: each layer's are broadcast
//    from their owners into a scratch before its forward and again before its backward.
#pragma once

#include <memory>
#include <vector>

#include "comm/nccl/nccl_all_gather.h"
#include "comm/nccl/nccl_reduce_scatter.h"
#include "engine/model/compute_device.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

class NcclZeroSync : public GradientSync, public ShardedState {
 public:
  // stage 1, 2 or 3 (throws std::invalid_argument otherwise); `gpu`: this rank's CUDA
  // device index, the one `device` computes on.
  NcclZeroSync(Communicator& peers, int stage, const ComputeDevice& device, int gpu);

  Communicator& peers() override { return peers_; }
  ModelBuffers placeModel(const float* params, size_t count) override;
  void start(float* params, size_t count) override;
  ParamRange updateRange(size_t count) const override;
  ShardedState* sharded() override { return this; }
  float* shardGradients(float* grads) override;
  float* gradientScratch(size_t largest_layer) override;
  float* parameterScratch(size_t largest_layer) override;
  void gatherParameters(size_t offset, size_t count) override;
  // No layer is held on a GPU yet: a GPT, whose token table would be, trains on the CPU.
  ModelBuffers holdLayer(size_t offset, size_t count) override;
  void reduceHeldLayers() override {}
  float* shardParameters() override;
  void wholeParameters(float* into, size_t count) override;
  size_t gradientBytesHeld() const override;
  size_t parameterBytesHeld() const override;
  size_t bufferBytesHeld() const override;
  void startStep() override;
  void beginStep(double /*lr*/) override { in_backward_ = true; }
  void gradientReady(float* grads, size_t offset, size_t count) override;
  SyncStats sync(float* grads, size_t count) override;
  SyncStats afterUpdate(float* params, size_t count) override;

 private:
  // Each owner's part of [offset, offset + count) of the flat parameters.
  struct Span {
    int owner;
    size_t begin, end;
  };
  std::vector<Span> spansOf(size_t offset, size_t count) const;
  size_t chunkOf(size_t count) const;
  // Stage 3: [offset, offset + count) of the flat parameters from the owners' shards, into
  // every rank's `into` (device memory of count floats).
  void gatherFromShards(float* into, size_t offset, size_t count);
  // A per-layer collective's time, into forward or backward, and its bytes.
  void countLayerCollective(int64_t start_ns, size_t floats, int64_t SyncStats::*counter);
  // What a ring moves per rank for `floats` floats reduced or gathered: (n - 1) / n each way.
  void countBytes(SyncStats& stats, size_t floats) const;
  float* deviceBuffer(std::unique_ptr<DeviceBuffer>& buffer, size_t floats);

  Communicator& peers_;
  int stage_;
  const ComputeDevice& device_;
  NcclComm nccl_;
  NcclReduceScatter reduce_scatter_;
  NcclAllGather all_gather_;
  size_t count_ = 0;
  size_t chunk_ = 0;
  ParamRange own_;
  std::unique_ptr<DeviceBuffer> padded_params_;  // stage 1: the model's, ranks x chunk
  std::unique_ptr<DeviceBuffer> padded_grads_;   // stage 1: the model's, ranks x chunk
  std::unique_ptr<DeviceBuffer> scratch_;        // stage 2, 3: one layer's gradients
  std::unique_ptr<DeviceBuffer> shard_grads_;    // stage 2, 3: the owned chunk's mean gradient
  std::unique_ptr<DeviceBuffer> param_scratch_;  // stage 3: one layer's parameters
  std::unique_ptr<DeviceBuffer> shard_params_;   // stage 3: the owned chunk of the parameters
  SyncStats pending_;                            // the per-layer collectives of this step
  bool in_backward_ = false;                     // beginStep() came: collectives are backward's
};

}  // namespace ranklab
