// How many BLAS threads a rank uses: parallel.threads when the job sets it, else the
// machine's cores shared evenly among the ranks on it (at least one each), so ranks do not
// oversubscribe the cores they share.
#pragma once

#include "engine/job/job_spec.h"

namespace ranklab {

// `ranks_here` is how many ranks share this host's cores (on hosts, fewer than
// parallel.ranks); 0 takes parallel.ranks, every rank on one machine.
int blasThreadsFor(const ParallelSpec& parallel, int cores, int ranks_here = 0);

}  // namespace ranklab
