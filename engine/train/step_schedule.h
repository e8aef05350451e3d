// A step schedule decides which micro-batch runs which pass on this rank, and when the
// gradients are complete for the strategy to combine. Data parallelism is the first: the
// rank's batch in parallel.microbatches slices, a forward and a backward each, gradients
// accumulated, buckets released during the last slice's backward only. Pipeline schedules
// (GPipe, 1F1B) are the next, running a stage's layers through Network::forwardActivations
// and backwardFrom with activations and gradients exchanged between neighbouring stages.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/batch_stream.h"
#include "engine/job/job_spec.h"
#include "engine/model/network.h"

namespace ranklab {

// One forward or backward pass of one micro-batch, on the steady clock (a pipeline's
// timeline draws them).
struct PassSpan {
  bool forward = true;
  int micro = 0;
  int64_t start_ns = 0, end_ns = 0;
};

// What one step's passes measured on this rank.
struct PassTimes {
  double loss_sum = 0;  // over the rank's batch (every stage of a pipeline gets it)
  int64_t forward_ns = 0;
  int64_t backward_ns = 0;
  int64_t wait_ns = 0;   // blocked on a neighbouring stage: the pipeline's bubble
  int64_t bytes_tx = 0;  // activations and their gradients sent to other stages
  int64_t bytes_rx = 0;
  int64_t sends = 0;  // messages to neighbouring stages, and from them
  int64_t recvs = 0;
  int64_t allreduces = 0;          // a pipeline's stages sharing the step's loss
  int stashed_peak = 0;            // most micro-batches whose activations this rank held at once
  int64_t stashed_bytes_peak = 0;  // their layer outputs (B x the layers' output sizes)
  std::vector<PassSpan> passes;    // a pipeline's passes in the order they ran
};

// An evaluation's share on this rank: samples is 0 where another rank scores them.
struct ScoredSamples {
  double loss_sum = 0;
  int64_t correct = 0;
  int64_t samples = 0;  // scored positions: samples, or a sequence's tokens
};

// Where a schedule hands control back, so it knows nothing of syncs or faults.
struct StepHooks {
  std::function<void()> before_backward;  // once, before the step's first backward
  GradientReadyFn on_ready;               // final gradient slices, during the last backward
  // Add to the gradients already there instead of starting from zero: the 2nd..kth batch
  // of a step that accumulates k (train.accumulate_steps). Data parallel only.
  bool accumulate = false;
};

class StepSchedule {
 public:
  virtual ~StepSchedule() = default;
  virtual std::string name() const = 0;  // "data-parallel"
  // This rank's passes of one optimizer step over `batch`: on return model.grads() hold
  // d(loss_scale * mean loss over the batch)/d(params).
  virtual PassTimes run(Network& model, const Batch& batch, float loss_scale,
                        const StepHooks& hooks) = 0;
  // Loss and accuracy over n samples in batches of `batch`, no dropout, no gradients.
  virtual ScoredSamples evaluate(Network& model, const float* x, const uint8_t* labels, int64_t n,
                                 int batch);
  // The model's outputs for `batch` samples x (host memory; a pipeline's first stage's
  // input), in its device's memory, on the rank that computes them (a pipeline's last
  // stage); null on the others, which pass their part on.
  virtual const float* predict(Network& model, const float* x, int batch) {
    return model.predict(x, batch);
  }
  // The memory ledger of `model`'s layers on this rank, per layer, over its copies.
  virtual std::vector<LayerMemory> memoryPerLayer(const Network& model) const {
    return model.memoryPerLayer();
  }
  // Copies of the model that each run a micro-batch (a pipeline's in flight), so far.
  virtual int copies() const { return 1; }
};

// The data-parallel schedule over `microbatches` slices of each batch.
class DataParallelSchedule : public StepSchedule {
 public:
  explicit DataParallelSchedule(int microbatches) : microbatches_(microbatches) {}
  std::string name() const override { return "data-parallel"; }
  PassTimes run(Network& model, const Batch& batch, float loss_scale,
                const StepHooks& hooks) override;

 private:
  int microbatches_;
};

// The slices of a batch of `size` samples: sizes differ by at most one, larger first.
int sliceSize(int size, int slices, int index);

}  // namespace ranklab
