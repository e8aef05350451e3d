#include "engine/train/thread_policy.h"

#include <algorithm>

namespace ranklab {

int blasThreadsFor(const ParallelSpec& parallel, int cores, int ranks_here) {
  if (parallel.threads > 0) return parallel.threads;
  const int sharing = ranks_here > 0 ? ranks_here : parallel.ranks;
  return std::max(1, std::max(1, cores) / std::max(1, sharing));
}

}  // namespace ranklab
