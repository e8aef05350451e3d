// Before a launch: the rank processes a launch would start on this machine against the cores
// it may use. Oversubscribing is normal here (8 ranks on 2 cores), but a job written for a
// cluster (parallel.ranks = 4,096, for `simulate` and `plan`) would start thousands of
// processes on a laptop: `run` refuses it and `validate` says so, before anything starts.
// Other hosts are not weighed here: Slurm's sbatch checks its allocation itself, and
// launch.hosts gives each host's slots (job_checks.cpp: they must hold every process).
#pragma once

#include <string>
#include <vector>

#include "engine/job/job_spec.h"

namespace ranklab {

// Rank processes a core takes at most: 8 ranks on 2 cores is how this machine runs lessons
// and tests; 32 a core leaves room for demos of many ranks, while a cluster's thousands
// (each a process of ~120 MB with its own MPI endpoints) would only thrash.
inline constexpr int kRanksPerCore = 32;

// The cores this process may use: its CPU affinity (a cpuset, taskset, or a Slurm step's
// share of a node), not every core the machine has.
int usableCores();

// True for "localhost", "127.0.0.1" and this machine's host name (with or without domain).
bool isThisMachine(const std::string& host);

// launch.hosts ("name:slots") filled in order, as Open MPI maps by slot (past the slots the
// ranks wrap around): the index in `entries` of each of `processes` ranks' host.
std::vector<size_t> hostOfEachRank(const std::vector<std::string>& entries, int processes);

struct RankCapacity {
  int ranks_here = 0;   // rank processes the launch starts on this machine
  int cores = 0;        // usableCores()
  int allowed = 0;      // kRanksPerCore * cores
  std::string refusal;  // "" when they fit; else what, why, and what to do
  bool fits() const { return refusal.empty(); }
};

// The check of `job`'s processes on this machine (`cores` of them usable).
RankCapacity checkRankCapacity(const JobSpec& job, int cores = usableCores());

}  // namespace ranklab
