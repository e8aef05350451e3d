// The training strategies (parallel.strategy) by name, each with what it does and the
// GradientSync it makes over the job's transport: the one list the job schema's test and
// the docs check against, and the one place a strategy and a transport meet.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/collectives/allreduce_registry.h"
#include "engine/model/compute_device.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/gradient_transport.h"

namespace ranklab {

// What a strategy is made from.
struct SyncContext {
  const JobSpec& job;
  Communicator& group;                           // the ranks it syncs (strategies may split it)
  std::vector<MatrixBlock> matrices;             // the weight matrices in the gradient (PowerSGD's)
  const ComputeDevice& device;                   // where the model's buffers are
  std::unique_ptr<GradientTransport> transport;  // what carries them; a strategy takes it
};

struct MadeSync {
  std::unique_ptr<GradientSync> sync;
  std::string how;  // "" on the host; else what crosses ranks and why, for the run's events
};

struct StrategyEntry {
  std::string name;
  std::string description;
  // Its how says what crosses ranks off the host (makeGradientSync adds the transport's why).
  std::function<MadeSync(SyncContext&)> make;
};

const std::vector<StrategyEntry>& strategyRegistry();
const std::vector<std::string>& strategyNames();

// The job's parallel.algorithm with its options, resolved once for the strategies that
// all-reduce. Throws std::invalid_argument naming the algorithm and the allowed ones.
AllreduceChoice allreduceOf(const ParallelSpec& parallel);

// The job's parallel.strategy over its transport for `device` (makeTransport): collective
// over `group`. Throws std::invalid_argument naming the strategy and the allowed ones, or
// what the device cannot run.
MadeSync makeGradientSync(const JobSpec& job, Communicator& group,
                          std::vector<MatrixBlock> matrices = {},
                          const ComputeDevice& device = cpuDevice());

}  // namespace ranklab
