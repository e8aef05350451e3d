// The training strategies (parallel.strategy) by name, each with what it does and the
// GradientSync it makes: the one list the job schema's test and the docs check against.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/collectives/allreduce_registry.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

struct StrategyEntry {
  std::string name;
  std::string description;
  // Collective over `world` (strategies may split it); `matrices` are the weight matrices
  // inside the gradient buffer (PowerSGD compresses those).
  std::function<std::unique_ptr<GradientSync>(const JobSpec&, Communicator&,
                                              std::vector<MatrixBlock>)>
      make;
};

const std::vector<StrategyEntry>& strategyRegistry();
const std::vector<std::string>& strategyNames();

// The job's parallel.algorithm with its options, resolved once for the strategies that
// all-reduce. Throws std::invalid_argument naming the algorithm and the allowed ones.
AllreduceChoice allreduceOf(const ParallelSpec& parallel);

// The job's parallel.strategy; throws std::invalid_argument naming it and the allowed ones.
std::unique_ptr<GradientSync> makeGradientSync(const JobSpec& job, Communicator& world,
                                               std::vector<MatrixBlock> matrices = {});

}  // namespace ranklab
