// How many BLAS threads a rank uses: parallel.threads when the job sets it, else the
// machine's cores shared evenly among the ranks on it (at least one each), so ranks do not
// oversubscribe the cores they share.
#pragma once

#include "engine/job/job_spec.h"

namespace ranklab {

int blasThreadsFor(const ParallelSpec& parallel, int cores);

}  // namespace ranklab
