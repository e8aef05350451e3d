// What the trainer writes to and reads from a checkpoint (engine/train/checkpoint.h is the
// file format): the model, the optimizer (gathered from the ranks that each update a
// slice), the loss scale and each rank's codec state, with the checks that make a resumed
// run continue exactly where it stopped.
#pragma once

#include <cstdint>
#include <string>

#include "comm/communicator.h"
#include "engine/amp/loss_scaler.h"
#include "engine/job/job_spec.h"
#include "engine/model/network.h"
#include "engine/optim/optimizer.h"
#include "engine/train/checkpoint.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/model_part.h"
#include "engine/train/parallel_layout.h"
#include "engine/train/train_observer.h"

namespace ranklab {

// Where a run stands: the last completed step, counted overall and within its epoch.
struct Position {
  int64_t step = 0;
  int epoch = 1;
  int64_t step_in_epoch = 0;
};

// What a checkpoint is written from and restored into: this rank's part of the run.
struct RunParts {
  Communicator& world;      // the ranks that train
  ParallelLayout& layout;   // how they split the model
  const ModelPartMap& map;  // where this rank's parameters sit in the whole model
  GradientSync& sync;
  Network& model;
  Optimizer& optimizer;
  LossScaler* scaler;  // AMP's, or null
};

// True when `local` holds on any rank (one tiny all-reduce).
bool onAnyRank(Communicator& comm, bool local);

// Restores this rank's part of the model, its optimizer state, the dropout stream and (with
// AMP) the loss scale from train.resume_from; returns where the run was. Throws
// CheckpointError naming what differs.
Position resumeFrom(const JobSpec& job, const Checkpoint& c, const RunParts& run);

// After sync.start(): this rank's compression state. `compression` is
// describeCompression() of the job. Warns, naming the job keys, about state the checkpoint
// does not hold (the run then differs).
void resumeCompression(const JobSpec& job, const std::string& compression, const Checkpoint& c,
                       const RunParts& run, TrainObserver& observer, int64_t step);

// Collective: gathers what differs per rank on rank 0 (each replica's optimizer shards, the
// parts of a split model, each rank's codec state), which writes train.checkpoint_path and
// reports a "checkpoint" event.
void saveCheckpoint(const JobSpec& job, const std::string& compression, const RunParts& run,
                    const Position& at, TrainObserver& observer);

}  // namespace ranklab
