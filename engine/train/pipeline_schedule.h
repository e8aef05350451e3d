// Pipeline parallelism: each rank of a pipeline group runs one stage (a contiguous run of
// the model's layers); micro-batches' activations go forward and their gradients backward
// between neighbouring stages over MPI point-to-point (tags::kPipeline). Two orders:
// - GPipe: every micro-batch's forward, then every backward: m micro-batches in flight.
// - 1F1B: p - s - 1 warm-up forwards on stage s, then one forward and one backward in turn,
//   then the remaining backwards: at most p - s in flight.
// Each micro-batch in flight has its own copy of the stage's layers (their caches hold its
// activations), all bound to the stage's one parameter and gradient buffer.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "engine/job/job_choices.h"
#include "engine/train/parallel_layout.h"
#include "engine/train/step_schedule.h"

namespace ranklab {

// Layer indices cutting `model` into `stages` runs of whole blocks (a layer with parameters
// and the layers after it up to the next one), balanced by counted multiply-adds per training
// sample (forward, input gradient, weight gradient; a convolution's at every position): stages + 1
// entries from 0 to the layer count. Throws std::invalid_argument when there are fewer
// blocks than stages.
std::vector<size_t> stageBoundaries(const Network& model, int stages);
// The same cut by hand (parallel.stage_layers): blocks[s] whole blocks in stage s. Throws
// std::invalid_argument unless every count is >= 1 and they add up to the model's blocks.
std::vector<size_t> stageBoundaries(const Network& model, const std::vector<int>& blocks);
// The same cuts of a model's layers before a network holds them (a memory estimate).
std::vector<size_t> stageBoundaries(const ModelLayers& layers, int stages);
std::vector<size_t> stageBoundaries(const ModelLayers& layers, const std::vector<int>& blocks);

class PipelineSchedule : public StepSchedule {
 public:
  // `stages`: this replica's pipeline group, ordered by stage. make_stage builds another
  // copy of this rank's stage (for a micro-batch in flight). A sample has
  // `labels_per_sample` labels (a sequence model's: one per position).
  PipelineSchedule(PipelineOrder order, int microbatches, Communicator& stages,
                   std::function<Network()> make_stage, int labels_per_sample = 1);
  std::string name() const override { return nameText(order_); }
  PassTimes run(Network& model, const Batch& batch, float loss_scale,
                const StepHooks& hooks) override;
  ScoredSamples evaluate(Network& model, const float* x, const uint8_t* labels, int64_t n,
                         int batch) override;
  const float* predict(Network& model, const float* x, int batch) override;
  // Every copy of the stage (one per micro-batch in flight) holds its own.
  std::vector<LayerMemory> memoryPerLayer(const Network& model) const override;
  int copies() const override { return std::max(1, static_cast<int>(slots_.size())); }

  struct Pass {
    bool forward = true;
    int micro = 0;
  };
  // The order of one step's passes on stage s of p.
  static std::vector<Pass> passOrder(PipelineOrder order, int stage, int stages, int microbatches);

 private:
  struct Slot;  // one micro-batch in flight: its copy of the stage and its buffers
  struct StepState;
  // Floats to or from a neighbouring stage; none when floats is 0.
  struct Message {
    float* data = nullptr;
    size_t floats = 0;
    int peer = -1;
  };
  // Each pass returns what it sends on.
  Message forward(StepState& step, int micro);
  Message backward(StepState& step, int micro);
  // What a pass receives before it runs, and where it goes.
  Message incoming(StepState& step, const Pass& pass);
  // The message itself where the stage computes in host memory; else its copy, downloaded
  // into `host` (MPI sends host memory).
  static Message toHost(const Network& net, Message message, std::vector<float>& host);
  Ticket post(StepState& step, const Message& message, bool send);
  // Waits for a posted message, the time counted as the pipeline's bubble.
  void waitCounted(StepState& step, Ticket& ticket);
  int samplesOf(const Batch& batch) const;
  const uint8_t* labelsOf(const Batch& batch, int sample) const;  // the sample's first
  // The slot of micro-batch `micro`: its copy of the stage bound to the model's buffers.
  Slot& slotFor(Network& model, int micro);

  PipelineOrder order_;
  int microbatches_;
  int labels_per_sample_;
  Communicator& stages_;
  std::function<Network()> make_stage_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<float> predict_input_, predict_output_;  // predict()'s host copies
};

// The schedule the job's [parallel] section asks for: data parallel, or a pipeline over
// the layout's pipeline group when parallel.pipeline > 1, over samples of
// `labels_per_sample` labels.
std::unique_ptr<StepSchedule> makeStepSchedule(const JobSpec& job, ParallelLayout& layout,
                                               std::function<Network()> make_stage,
                                               int labels_per_sample = 1);

}  // namespace ranklab
