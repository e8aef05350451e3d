// Draws the job's faults make the same on every rank and in the simulator: which rank a moving
// straggler slows at a step (fault.moving_straggler_ms), from train.seed and the step alone.
#pragma once

#include <cstdint>

#include "engine/job/job_spec.h"

namespace ranklab {

// The rank of `ranks` that the moving straggler slows in step `step` (counted from 1).
inline int movingStragglerAt(const JobSpec& job, int64_t step, int ranks) {
  // SplitMix64 of (seed, step): every rank draws alike, without a stream to keep in step.
  uint64_t z = job.train.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(step);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<int>(z % static_cast<uint64_t>(ranks > 0 ? ranks : 1));
}

}  // namespace ranklab
