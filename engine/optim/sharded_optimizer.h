// ZeRO's sharded optimizer state: an optimizer over one slice of the parameters (this
// rank's shard) that presents itself as one over all of them, so checkpoints stay whole
// (engine/train/sharded_optimizer_state.h gathers every rank's slice) and resume onto any
// layout. Only the shard's state is held; the rest exists only in a checkpoint.
#pragma once

#include <memory>

#include "engine/optim/optimizer.h"

namespace ranklab {

class ShardedOptimizer : public Optimizer {
 public:
  // `inner` is built for own.end - own.begin parameters of a model of `parameters`.
  ShardedOptimizer(std::unique_ptr<Optimizer> inner, size_t parameters, ParamRange own);

  std::string kind() const override { return inner_->kind(); }
  void countStep() override { inner_->countStep(); }
  // Only `own` may be updated (throws std::invalid_argument for another range).
  void updateRange(float* params, const float* grads, double lr, ParamRange range) override;
  // The update of the shard from its gradients alone (shard_grads: own's length).
  void stepShard(float* params, const float* shard_grads, double lr) {
    stepOwn(params + own_.begin, shard_grads, lr);
  }
  // The same where only the shard's parameters are held (ZeRO 3: own_params, own's length).
  void stepOwn(float* own_params, const float* shard_grads, double lr);
  size_t parameterCount() const override { return parameters_; }
  size_t stateBytes() const override { return inner_->stateBytes(); }
  // Tensors of the whole model's length, holding this shard's state in its slice, zeros
  // elsewhere (a checkpoint fills them from the other ranks).
  OptimizerState state() const override;
  // Takes this shard's slice of a whole model's state.
  void restore(const OptimizerState& state) override;
  ParamRange own() const { return own_; }

 private:
  std::unique_ptr<Optimizer> inner_;
  size_t parameters_;
  ParamRange own_;
};

}  // namespace ranklab
