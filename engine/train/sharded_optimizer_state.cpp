#include "engine/train/sharded_optimizer_state.h"

#include <cstdint>

namespace ranklab {

namespace {
constexpr int kOptimizerSliceTag = 0x7c4c;  // rank -> rank 0: a checkpoint's optimizer slice
}

OptimizerState gatherOptimizerState(Communicator& comm, const Optimizer& optimizer,
                                    ParamRange own) {
  OptimizerState state = optimizer.state();
  if (comm.rank() != 0) {
    const uint64_t range[2] = {own.begin, own.end};
    comm.send(range, sizeof range, 0, kOptimizerSliceTag);
    for (const auto& [name, values] : state.tensors) {
      comm.send(values.data() + own.begin, (own.end - own.begin) * sizeof(float), 0,
                kOptimizerSliceTag);
    }
    return state;
  }
  for (int r = 1; r < comm.size(); ++r) {
    uint64_t range[2] = {0, 0};
    comm.recv(range, sizeof range, r, kOptimizerSliceTag);
    // Every rank's state has the same tensors, in the same order and size.
    for (auto& [name, values] : state.tensors) {
      comm.recv(values.data() + range[0], (range[1] - range[0]) * sizeof(float), r,
                kOptimizerSliceTag);
    }
  }
  return state;
}

}  // namespace ranklab
