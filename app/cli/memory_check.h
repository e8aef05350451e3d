// Before a launch: each rank's estimated peak memory (engine/train/memory_estimate.h) summed
// over the ranks each host runs, against what this machine has; `validate` prints it and
// `run` refuses a job whose ranks here need more (unless --ignore-memory-estimate).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "engine/job/job_spec.h"
#include "engine/train/memory_estimate.h"

namespace ranklab {

// What this machine has: /proc/meminfo's MemTotal and MemAvailable, lowered to the cgroup's
// memory.max (less its memory.current) where one is set.
struct MachineMemory {
  size_t total = 0;
  size_t available = 0;
  bool cgroup_limited = false;  // the cgroup's limit, not MemAvailable, bounds it
};
MachineMemory machineMemory();

// The ranks one host runs and what they need together.
struct HostNeed {
  std::string host;  // "this machine", a launch.hosts name, "each Slurm node"
  int ranks = 0;
  size_t bytes = 0;   // its ranks' sum and, once, shared_bytes
  size_t shared = 0;  // what the host holds once for all its ranks (kHostSharedBytes)
  bool here = false;  // this machine: checked against machineMemory()
};

struct MemoryCheck {
  MemoryEstimate estimate;
  std::vector<HostNeed> hosts;
  std::string unchecked;  // why the hosts are not checked (a hostfile, Slurm); "" when they are
  MachineMemory machine;
  std::string refusal;  // "" when the ranks here fit; else what, why, and what to do
  bool fits() const { return refusal.empty(); }
};

// The estimate for `job` on `machine`. Throws std::invalid_argument naming a model key whose
// shape does not fit the data, as the launch would.
MemoryCheck checkMemory(const JobSpec& job, const MachineMemory& machine = machineMemory());

// The lines `validate` prints: the peak rank's parts, a table when ranks differ, each host's
// sum against this machine.
void printMemory(std::ostream& out, const MemoryCheck& check);
// validate --json's "memory" object.
nlohmann::json memoryJson(const MemoryCheck& check);

}  // namespace ranklab
