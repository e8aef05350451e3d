// A socket per rank: a collector holds one connection per rank, a simulation's feeder one
// socket per rank it sends for; past ~1,000 ranks that outgrows a default soft limit of open
// descriptors (1,024 on Debian).
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <cstddef>

namespace ranklab {

// Raises this process's soft limit of open descriptors to at least `needed`, as far as the
// hard limit allows; never lowers it.
inline void allowOpenFiles(size_t needed) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= needed) return;
  limit.rlim_cur =
      limit.rlim_max == RLIM_INFINITY ? needed : std::min<rlim_t>(needed, limit.rlim_max);
  setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace ranklab
