// Ranks that share one model and each update a slice of it (parallel.algorithm =
// "shm-sharded") hold optimizer state that is current only inside their own slice; a
// checkpoint needs all of it.
#pragma once

#include "comm/communicator.h"
#include "engine/optim/optimizer.h"

namespace ranklab {

// Collective over `comm`: the optimizer's state on rank 0 with every rank's `own` slice of
// every tensor taken from that rank; the local state unchanged on the other ranks.
OptimizerState gatherOptimizerState(Communicator& comm, const Optimizer& optimizer, ParamRange own);

}  // namespace ranklab
