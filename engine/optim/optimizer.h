// Optimizers over one flat parameter buffer, each following PyTorch 1.13's update rule
// (torch.optim.SGD, Adam, AdamW, single-tensor path) so that runs can be compared step for
// step. Their state is named tensors, so a checkpoint can store and restore it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/job/job_spec.h"
#include "engine/model/compute_device.h"

namespace ranklab {

// A slice [begin, end) of the flat parameter buffer.
struct ParamRange {
  size_t begin = 0;
  size_t end = 0;
};

struct OptimizerState {
  int64_t steps = 0;  // updates taken (Adam's bias correction needs it)
  std::vector<std::pair<std::string, std::vector<float>>> tensors;  // e.g. ("momentum", ...)
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // "sgd", "adam", "adamw": what a checkpoint records, and must match on resume.
  virtual std::string kind() const = 0;
  // params -= update(grads) at learning rate lr.
  void step(float* params, const float* grads, double lr) {
    stepRange(params, grads, lr, {0, parameterCount()});
  }
  // The same update for params[range] only (the ranks that share an update each take a
  // slice); the state of the other parameters stays as it is. Counts as one step.
  void stepRange(float* params, const float* grads, double lr, ParamRange range) {
    countStep();
    updateRange(params, grads, lr, range);
  }
  // A step taken in pieces (priority-scheduled communication updates each piece as its
  // gradient arrives): countStep() once, then updateRange() for each piece.
  virtual void countStep() = 0;
  virtual void updateRange(float* params, const float* grads, double lr, ParamRange range) = 0;
  virtual size_t parameterCount() const = 0;
  // Memory its state holds (the memory ledger's "optimizer").
  virtual size_t stateBytes() const = 0;
  virtual OptimizerState state() const = 0;
  // Throws std::invalid_argument naming the tensor that is missing or has the wrong size.
  virtual void restore(const OptimizerState& state) = 0;
};

// The state lives on the device that holds the parameters (params and grads are its memory)
// and the update runs there; state() and restore() move it through host memory.

// g += wd p;  v = momentum v + g;  g = nesterov ? g + momentum v : v;  p -= lr g
class Sgd : public Optimizer {
 public:
  Sgd(size_t parameters, double momentum, double weight_decay, bool nesterov = false,
      const DeviceMemory& device = cpuDevice());
  std::string kind() const override { return "sgd"; }
  void countStep() override { ++steps_; }
  void updateRange(float* params, const float* grads, double lr, ParamRange range) override;
  size_t parameterCount() const override { return velocity_->size(); }
  size_t stateBytes() const override { return velocity_->size() * sizeof(float); }
  OptimizerState state() const override;
  void restore(const OptimizerState& state) override;

 private:
  float momentum_;
  float weight_decay_;
  bool nesterov_;
  int64_t steps_ = 0;
  const DeviceMemory* device_;
  std::unique_ptr<DeviceBuffer> velocity_;
};

// Adam (L2 weight decay added to the gradient) and AdamW (decoupled: p *= 1 - lr wd):
// m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
// p -= lr / (1-b1^t) * m / (sqrt(v) / sqrt(1-b2^t) + eps)
class Adam : public Optimizer {
 public:
  Adam(size_t parameters, double beta1, double beta2, double eps, double weight_decay,
       bool decoupled_weight_decay, const DeviceMemory& device = cpuDevice());
  std::string kind() const override { return decoupled_ ? "adamw" : "adam"; }
  void countStep() override { ++steps_; }
  void updateRange(float* params, const float* grads, double lr, ParamRange range) override;
  size_t parameterCount() const override { return first_moment_->size(); }
  size_t stateBytes() const override { return 2 * first_moment_->size() * sizeof(float); }
  OptimizerState state() const override;
  void restore(const OptimizerState& state) override;

 private:
  double beta1_, beta2_, eps_, weight_decay_;
  bool decoupled_;
  int64_t steps_ = 0;
  const DeviceMemory* device_;
  std::unique_ptr<DeviceBuffer> first_moment_;
  std::unique_ptr<DeviceBuffer> second_moment_;
};

// The job's [train] optimizer for a model with `parameters` parameters on `device`.
std::unique_ptr<Optimizer> makeOptimizer(const TrainSpec& train, size_t parameters,
                                         const DeviceMemory& device = cpuDevice());

}  // namespace ranklab
