// Where Open MPI puts the ranks of a job with launch.hosts or launch.hostfile, and which
// address of this machine their telemetry comes back to.
#pragma once

#include <string>
#include <vector>

#include "engine/job/job_spec.h"

namespace ranklab {

// mpirun's placement and MCA arguments: --host a:2,b:2 or --hostfile F, then --mca k v
// for each launch.mca entry. On one machine, shared memory only and Open MPI's own traffic
// on loopback; under Slurm nothing but the mca entries (mpirun reads the allocation).
std::vector<std::string> placementArguments(const LaunchSpec& launch);

// The host names of launch.hosts, or the first word of each line of launch.hostfile.
// Throws std::runtime_error naming the hostfile when it cannot be read or names no host.
std::vector<std::string> hostNames(const LaunchSpec& launch);

// launch.telemetry_address when set; under Slurm, the address this machine's name resolves
// to (127.0.0.1 when that is loopback); else, for ranks on hosts, this machine's source
// address on the route to the first host that is not this machine (127.0.0.1 when all
// are); 127.0.0.1 on one machine. Throws std::runtime_error naming the host and the key
// to set when a host's name does not resolve.
std::string telemetryAddress(const LaunchSpec& launch);

}  // namespace ranklab
