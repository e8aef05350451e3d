// One rank's training run as an object with seams: setup (and resume) in the constructor,
// then step(), evaluate(), checkpoint() and finish(), driven by train() (trainer.cpp). A step
// reads top to bottom: next batch, the schedule's passes (engine/train/step_schedule.h:
// forward, zero grads, backward, per micro-batch), sync gradients, update.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "comm/communicator.h"
#include "engine/amp/loss_scaler.h"
#include "engine/data/batch_stream.h"
#include "engine/data/idx_dataset.h"
#include "engine/data/shard_loader.h"
#include "engine/job/job_spec.h"
#include "engine/model/network.h"
#include "engine/model/tensor_parallel.h"
#include "engine/optim/lr_schedule.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/sharded_optimizer.h"
#include "engine/train/checkpointing.h"
#include "engine/train/gradient_norm.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/model_part.h"
#include "engine/train/parallel_layout.h"
#include "engine/train/step_schedule.h"
#include "engine/train/strategy_registry.h"
#include "engine/train/tied_table_sync.h"
#include "engine/train/train_observer.h"

namespace ranklab {

class TrainingRun {
 public:
  // Builds the model, optimizer, gradient sync and loader; resumes from train.resume_from;
  // warms the kernels up and starts the clock together with the other ranks (collective).
  TrainingRun(const JobSpec& job, Communicator& comm, const Dataset& train_set,
              const Dataset& test_set, TrainObserver& observer);
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  const Position& position() const { return at_; }
  bool finished() const { return at_.step >= total_steps_; }
  // Steps of `epoch` not yet run (all of them for an epoch not yet begun).
  int64_t stepsLeftIn(int epoch) const;

  // One optimizer step of `epoch` on the next batch; the observer gets its StepStats.
  StepStats step(int epoch);
  bool checkpointDue() const;
  void checkpoint();
  // Test loss and accuracy after `epoch`, on every rank's slice of the test set.
  // The test loss and accuracy over every rank's share (inside an epoch: the first
  // train.eval_batches batches of it); a GPT's first rank then writes
  // train.sample_chars bytes of text (an event "sample").
  EvalStats evaluate(int epoch, bool inside_epoch = false);
  // train.eval_every says an evaluation inside the epoch is due now (not at its last step,
  // which the epoch's own evaluation follows).
  bool evaluationDue() const;
  // The last checkpoint (if one is wanted and not yet written) and the sync's end.
  TrainResult finish();

 private:
  void startFrom(const Dataset& train_set);
  // After an elastic resume on another world size: the epoch's position, the last step.
  void resizedFrom(int saved_world);
  // A "pipeline" or "tensor" event naming the part of the model this rank holds.
  void announceModelPart();
  // Page-locks the batch buffers for a GPU's asynchronous uploads; says so if it cannot.
  PinHostFn pinBatches();
  // The model's buffers where the sync wants them (shared memory, ZeRO's scratches); the
  // sync's start.
  void placeModel();
  // The step's batches' passes (train.accumulate_steps of them); returns whether this
  // rank's gradients overflowed (AMP).
  bool forwardBackward(StepStats& s);
  // One batch's passes, the first and last of a step's (hooks), into the step's measures.
  void runPasses(StepStats& s, const Batch& batch, bool first, bool last);
  // settle: wait for communication still in flight (priority scheduling) before returning.
  void syncAndUpdate(StepStats& s, bool settle);
  SyncStats sumTiedTable(StepStats& s);  // a GPT's two copies of its token table
  // ZeRO, after backward: the tied table's sum, then the reduce-scatter of the layers kept
  // for the step (ZeRO 2, 3), before AMP unscales the shard.
  void settleBeforeSharding(StepStats& s);
  // The optimizer's step on the parameters this rank updates.
  void update(double lr);
  // AMP: the gradients this rank updates with divided by the loss scale; false on inf/NaN.
  bool unscaleGradients();
  void skipOverflowedStep(StepStats& s);
  void saveCheckpointNow();  // collective; a "checkpoint" span
  RunParts runParts();       // what a checkpoint is written from and restored into
  void writeSample();        // a GPT's text, on the first rank
  // The memory ledger: parameters, gradients, optimizer state and activations, in bytes.
  void recordMemory(StepStats& s) const;
  // The tensor-parallel all-reduces of the step's passes: communication, not compute.
  // The update's gradient's global norm, clipped to train.grad_clip (0 where no rank of
  // this run holds its whole update's gradient: a server's, a shared model's, pieces').
  double measureGradient(StepStats& s);
  // A GPT's text sample where its stages sit on several ranks.
  std::string sampleThroughStages(int chars, uint64_t seed);
  void recordTensorParallel(StepStats& s);

  const JobSpec& job_;
  TrainObserver& observer_;
  const Dataset& test_set_;
  std::unique_ptr<ParallelLayout> layout_;  // the training ranks as data x pipeline x tensor
  std::unique_ptr<TensorGroup> tensor_;     // its tensor group, when the layers are split
  const ComputeDevice& device_;             // where the model computes (train.device)
  Network model_;                           // this rank's stage, or slice, of the model
  ModelPartMap part_map_;                   // where its parameters sit in the whole model
  std::unique_ptr<Optimizer> optimizer_;    // over updateRange() alone under ZeRO
  ShardedOptimizer* sharded_ = nullptr;     // optimizer_, when it is that
  MadeSync made_sync_;                      // made here; its sync moves to sync_, its how stays
  std::unique_ptr<GradientSync> sync_;      // over the layout's data group
  CommSpans comm_spans_;                    // a sampled step's communication pieces
  DeviceTrace device_trace_;                // and what its device computed, piece by piece
  Communicator& peers_;                     // the ranks that train (a parameter server's workers)
  std::unique_ptr<StepSchedule> schedule_;
  std::optional<LossScaler> scaler_;
  std::optional<ShardLoader> loader_;
  std::optional<LrSchedule> lr_;
  std::optional<BatchStream> batches_;
  std::string compression_;  // describeCompression() of the job, for checkpoints
  GradientReadyFn on_ready_;
  ParamRange update_range_;
  std::optional<GradientNorm> norm_;           // the gradient's norm, and train.grad_clip
  std::unique_ptr<TiedTableSync> tied_table_;  // a GPT's first or last pipeline stage
  SyncStats tied_before_sync_;                 // its sum this step, under ZeRO
  int64_t steps_per_epoch_ = 0;  // optimizer steps: the loader's batches / accumulate_steps
  int64_t total_steps_ = 0;
  bool straggler_ = false;
  bool pin_failed_ = false;  // the batch buffers could not be page-locked (said once)
  Position at_;
  int64_t checkpointed_step_ = 0;
  int64_t eval_ns_ = 0;
  int64_t loop_start_ns_ = 0;
  EvalStats last_eval_;
};

}  // namespace ranklab
