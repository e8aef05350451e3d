// The training loop of one rank. A step reads top to bottom: next batch, forward,
// zero grads, backward, sync gradients, update. Progress goes to a TrainObserver, so the
// engine never touches sockets.
#pragma once

#include <cstdint>
#include <string>

#include "comm/communicator.h"
#include "comm/ps/parameter_shard.h"
#include "engine/data/idx_dataset.h"
#include "engine/job/job_spec.h"

namespace ranklab {

struct StepStats {
  int64_t step = 0;  // 1-based, counted over all epochs
  int epoch = 0;     // 1-based
  int64_t samples = 0;
  int64_t data_ns = 0, forward_ns = 0, backward_ns = 0, compress_ns = 0;
  int64_t comm_ns = 0, wait_ns = 0, update_ns = 0;
  int64_t comm_hidden_ns = 0;  // part of comm_ns that overlapped backward
  double loss = 0;             // this rank's batch mean
  int64_t bytes_tx = 0, bytes_rx = 0, bytes_raw = 0;
  double lr = 0;
  double loss_scale = 1;  // AMP's dynamic loss scale used in this step (1 without AMP)
  bool overflow = false;  // AMP found inf/NaN on some rank and every rank skipped the update
  int64_t staleness = 0;  // ps-async: server updates between this rank's pull and its push
};

struct EvalStats {
  int64_t step = 0;
  int epoch = 0;
  double test_loss = 0;  // over the whole test set (all ranks' slices combined)
  double test_accuracy = 0;
};

class TrainObserver {
 public:
  virtual ~TrainObserver() = default;
  virtual void onStep(const StepStats&) {}
  virtual void onEval(const EvalStats&) {}
  virtual void onEvent(const std::string& /*kind*/, const std::string& /*text*/, int64_t /*step*/) {
  }
  // A parameter server rank's load over the last interval.
  virtual void onServerLoad(const ServerLoad&) {}
  // Stepping pauses now (an evaluation or a checkpoint follows): progress held back for
  // batching should leave before it.
  virtual void onPause() {}
};

struct TrainResult {
  int64_t steps = 0;
  int64_t train_ns = 0;  // the loop's wall time less evaluation
  EvalStats last_eval;
};

// Runs the job's epochs on this rank's shard; every training rank must call it
// (collectives). Under a parameter server, server ranks call serveParameters() instead.
TrainResult train(const JobSpec& job, Communicator& comm, const Dataset& train_set,
                  const Dataset& test_set, TrainObserver& observer);

}  // namespace ranklab
