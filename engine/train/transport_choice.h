// Which transport carries a job's buffers (gradient_transport.h): the host ring on host
// memory; off it NCCL where it can run and the job allows, else the host ring through host
// copies, saying why.
#pragma once

#include <memory>

#include "engine/job/job_spec.h"
#include "engine/model/compute_device.h"
#include "engine/train/gradient_transport.h"

namespace ranklab {

// The host ring over host memory (the CPU's, or a test's device that computes in it).
std::unique_ptr<GradientTransport> makeHostTransport(Communicator& group,
                                                     const DeviceMemory& memory = cpuDevice());

// The job's transport for `device`'s buffers; collective over `group` off the host (which
// GPU each rank has). Throws std::invalid_argument when the job asks for "nccl" and NCCL
// cannot run (two ranks on one GPU, a build without NCCL, a strategy it cannot carry).
std::unique_ptr<GradientTransport> makeTransport(const JobSpec& job, Communicator& group,
                                                 const ComputeDevice& device);

// The rank's place among the ranks of its host (Open MPI's local rank; else its rank).
int localRank(const Communicator& world);

}  // namespace ranklab
