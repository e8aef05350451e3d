#include "engine/optim/sharded_optimizer.h"

#include <stdexcept>

namespace ranklab {

ShardedOptimizer::ShardedOptimizer(std::unique_ptr<Optimizer> inner, size_t parameters,
                                   ParamRange own)
    : inner_(std::move(inner)), parameters_(parameters), own_(own) {
  if (own.begin > own.end || own.end > parameters ||
      inner_->parameterCount() != own.end - own.begin) {
    throw std::invalid_argument("ShardedOptimizer: shard [" + std::to_string(own.begin) + ", " +
                                std::to_string(own.end) + ") of " + std::to_string(parameters) +
                                " parameters with an optimizer over " +
                                std::to_string(inner_->parameterCount()));
  }
}

void ShardedOptimizer::updateRange(float* params, const float* grads, double lr, ParamRange range) {
  if (range.begin != own_.begin || range.end != own_.end) {
    throw std::invalid_argument("ShardedOptimizer: step over [" + std::to_string(range.begin) +
                                ", " + std::to_string(range.end) + ") but this rank holds [" +
                                std::to_string(own_.begin) + ", " + std::to_string(own_.end) + ")");
  }
  inner_->updateRange(params + own_.begin, grads + own_.begin, lr, {0, own_.end - own_.begin});
}

void ShardedOptimizer::stepOwn(float* own_params, const float* shard_grads, double lr) {
  inner_->step(own_params, shard_grads, lr);
}

OptimizerState ShardedOptimizer::state() const {
  OptimizerState shard = inner_->state();
  OptimizerState whole{shard.steps, {}};
  for (auto& [name, values] : shard.tensors) {
    std::vector<float> full(parameters_, 0.f);
    std::copy(values.begin(), values.end(), full.begin() + static_cast<ptrdiff_t>(own_.begin));
    whole.tensors.emplace_back(name, std::move(full));
  }
  return whole;
}

void ShardedOptimizer::restore(const OptimizerState& state) {
  OptimizerState shard{state.steps, {}};
  for (const auto& [name, values] : state.tensors) {
    if (values.size() != parameters_) {
      throw std::invalid_argument(kind() + " state \"" + name + "\" holds " +
                                  std::to_string(values.size()) + " values, the model has " +
                                  std::to_string(parameters_) + " parameters");
    }
    shard.tensors.emplace_back(
        name, std::vector<float>(values.begin() + static_cast<ptrdiff_t>(own_.begin),
                                 values.begin() + static_cast<ptrdiff_t>(own_.end)));
  }
  inner_->restore(shard);
}

}  // namespace ranklab
