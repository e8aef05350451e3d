#include "engine/train/thread_policy.h"

#include <algorithm>

namespace ranklab {

int blasThreadsFor(const ParallelSpec& parallel, int cores) {
  if (parallel.threads > 0) return parallel.threads;
  return std::max(1, std::max(1, cores) / std::max(1, parallel.ranks));
}

}  // namespace ranklab
