#include "engine/optim/optimizer.h"

#include <cmath>
#include <stdexcept>

namespace ranklab {

namespace {

// The tensor called `name` in `state`, checked to hold `size` values.
const std::vector<float>& tensorOf(const OptimizerState& state, const std::string& kind,
                                   const std::string& name, size_t size) {
  for (const auto& [tensor_name, values] : state.tensors) {
    if (tensor_name != name) continue;
    if (values.size() != size) {
      throw std::invalid_argument(kind + " state \"" + name + "\" holds " +
                                  std::to_string(values.size()) + " values, the model has " +
                                  std::to_string(size) + " parameters");
    }
    return values;
  }
  throw std::invalid_argument(kind + " state has no \"" + name + "\" tensor");
}

// A state tensor's values on the host, and back onto the device.
std::vector<float> downloaded(const DeviceMemory& device, DeviceBuffer& buffer) {
  std::vector<float> values(buffer.size());
  device.download(values.data(), buffer.data(), values.size());
  return values;
}

void uploadInto(const DeviceMemory& device, DeviceBuffer& buffer,
                const std::vector<float>& values) {
  device.upload(buffer.data(), values.data(), values.size());
}

void checkRange(ParamRange range, size_t parameters) {
  if (range.begin > range.end || range.end > parameters) {
    throw std::invalid_argument("optimizer step over parameters [" + std::to_string(range.begin) +
                                ", " + std::to_string(range.end) + ") of a model with " +
                                std::to_string(parameters));
  }
}

}  // namespace

Sgd::Sgd(size_t parameters, double momentum, double weight_decay, bool nesterov,
         const DeviceMemory& device)
    : momentum_(static_cast<float>(momentum)),
      weight_decay_(static_cast<float>(weight_decay)),
      nesterov_(nesterov),
      device_(&device),
      velocity_(device.allocate(parameters)) {}

void Sgd::updateRange(float* params, const float* grads, double lr, ParamRange range) {
  checkRange(range, velocity_->size());
  const size_t b = range.begin;
  // PyTorch starts the momentum buffer as a copy of the first gradient: momentum * 0 + g.
  device_->sgdUpdate(params + b, grads + b, velocity_->data() + b, range.end - b,
                     static_cast<float>(lr), momentum_, weight_decay_, nesterov_);
}

OptimizerState Sgd::state() const {
  return {steps_, {{"momentum", downloaded(*device_, *velocity_)}}};
}

void Sgd::restore(const OptimizerState& state) {
  uploadInto(*device_, *velocity_, tensorOf(state, kind(), "momentum", velocity_->size()));
  steps_ = state.steps;
}

Adam::Adam(size_t parameters, double beta1, double beta2, double eps, double weight_decay,
           bool decoupled_weight_decay, const DeviceMemory& device)
    : beta1_(beta1),
      beta2_(beta2),
      eps_(eps),
      weight_decay_(weight_decay),
      decoupled_(decoupled_weight_decay),
      device_(&device),
      first_moment_(device.allocate(parameters)),
      second_moment_(device.allocate(parameters)) {}

void Adam::updateRange(float* params, const float* grads, double lr, ParamRange range) {
  checkRange(range, first_moment_->size());
  // Scalars in double, as PyTorch computes them in Python before the float kernels.
  const double t = static_cast<double>(steps_);
  kernels::AdamScalars s;
  s.beta1 = static_cast<float>(beta1_);
  s.one_minus_beta1 = static_cast<float>(1.0 - beta1_);
  s.beta2 = static_cast<float>(beta2_);
  s.one_minus_beta2 = static_cast<float>(1.0 - beta2_);
  s.eps = static_cast<float>(eps_);
  s.step_size = static_cast<float>(lr / (1.0 - std::pow(beta1_, t)));
  s.sqrt_bias_correction2 = static_cast<float>(std::sqrt(1.0 - std::pow(beta2_, t)));
  s.l2 = decoupled_ ? 0.f : static_cast<float>(weight_decay_);
  s.decay_factor = decoupled_ ? static_cast<float>(1.0 - lr * weight_decay_) : 1.f;
  const size_t b = range.begin;
  device_->adamUpdate(params + b, grads + b, first_moment_->data() + b, second_moment_->data() + b,
                      range.end - b, s);
}

OptimizerState Adam::state() const {
  return {steps_,
          {{"exp_avg", downloaded(*device_, *first_moment_)},
           {"exp_avg_sq", downloaded(*device_, *second_moment_)}}};
}

void Adam::restore(const OptimizerState& state) {
  const size_t n = first_moment_->size();
  // Both checked before either is written: a bad checkpoint leaves the state as it was.
  const auto& first = tensorOf(state, kind(), "exp_avg", n);
  const auto& second = tensorOf(state, kind(), "exp_avg_sq", n);
  uploadInto(*device_, *first_moment_, first);
  uploadInto(*device_, *second_moment_, second);
  steps_ = state.steps;
}

std::unique_ptr<Optimizer> makeOptimizer(const TrainSpec& train, size_t parameters,
                                         const DeviceMemory& device) {
  switch (train.optimizer) {
    case OptimizerKind::kSgd:
      return std::make_unique<Sgd>(parameters, train.momentum, train.weight_decay, train.nesterov,
                                   device);
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      return std::make_unique<Adam>(parameters, train.beta1, train.beta2, train.eps,
                                    train.weight_decay, train.optimizer == OptimizerKind::kAdamW,
                                    device);
  }
  throw std::logic_error("train.optimizer: no optimizer for " + nameText(train.optimizer));
}

}  // namespace ranklab
