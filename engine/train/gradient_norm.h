// The global L2 norm of the gradient an update reads, and train.grad_clip's clipping by it
// (PyTorch's clip_grad_norm_: every gradient times max_norm / (norm + 1e-6) when that is
// below 1). Each rank holds a part of the model's gradient where the model or its update
// is split: a tensor slice its slices of the split tensors (and, on every slice, the same
// replicated ones, counted once: by slice 0), a pipeline stage its stage's (a GPT's last
// stage also a copy of the first's token table, not counted), a ZeRO rank its shard. Their
// squares are summed over those groups, which is a collective: it runs only
// where something clips, so an unclipped split run records no norm (0), and its counts of
// collectives stay the mechanism's own.
#pragma once

#include <cstddef>
#include <vector>

#include "comm/communicator.h"
#include "engine/model/device_memory.h"
#include "engine/model/network.h"

namespace ranklab {

// The ranks whose parts of one gradient add up to the whole (null: this rank's part is
// whole in that direction).
struct GradientParts {
  Communicator* slices = nullptr;  // tensor parallelism
  Communicator* stages = nullptr;  // pipeline parallelism
  Communicator* shards = nullptr;  // ZeRO's data group
  bool split() const { return slices || stages || shards; }
};

class GradientNorm {
 public:
  // `max_norm` 0: measure only. `counted_views`: per view of the model, whether this rank
  // counts its squares (empty: every view).
  GradientNorm(double max_norm, GradientParts parts, std::vector<bool> counted_views);

  // The norm of the gradient `grads` (this rank's part, `count` floats of the model's flat
  // gradient from its float `first`, in `device`'s memory), clipped to max_norm in place.
  // Returns 0 without measuring where the parts are split and nothing clips. `sums` counts
  // the collectives it took part in.
  double measureAndClip(const Network& model, float* grads, size_t first, size_t count,
                        const DeviceMemory& device, int64_t& sums) const;

 private:
  double squaresOfThisPart(const Network& model, const float* grads, size_t first, size_t count,
                           const DeviceMemory& device) const;

  double max_norm_;
  GradientParts parts_;
  std::vector<bool> counted_views_;
};

}  // namespace ranklab
