#include "app/cli/rank_capacity.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace ranklab {

int usableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
}

bool isThisMachine(const std::string& host) {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  const std::string self = name;
  return host == "localhost" || host == "127.0.0.1" || host == self ||
         host == self.substr(0, self.find('.'));
}

std::vector<size_t> hostOfEachRank(const std::vector<std::string>& entries, int processes) {
  std::vector<int> slots;
  for (const std::string& entry : entries) {
    const auto colon = entry.find(':');
    slots.push_back(colon == std::string::npos ? 1 : std::max(1, std::atoi(&entry[colon + 1])));
  }
  std::vector<size_t> host;
  if (entries.empty()) return host;
  host.reserve(size_t(std::max(0, processes)));
  for (size_t h = 0; int(host.size()) < processes; h = (h + 1) % entries.size())
    for (int s = 0; s < slots[h] && int(host.size()) < processes; ++s) host.push_back(h);
  return host;
}

namespace {

// The rank processes the launch starts on this machine: all of a local launch's, the slots
// of launch.hosts that name it; none under Slurm or a hostfile (not placed by ranklab).
int ranksOnThisMachine(const JobSpec& job) {
  if (runsUnderSlurm(job) || !job.launch.hostfile.empty()) return 0;
  const int processes = processCount(job);
  const std::vector<std::string>& hosts = job.launch.hosts;
  if (hosts.empty()) return processes;
  int here = 0;
  for (const size_t h : hostOfEachRank(hosts, processes))
    here += isThisMachine(hosts[h].substr(0, hosts[h].find(':')));
  return here;
}

}  // namespace

RankCapacity checkRankCapacity(const JobSpec& job, int cores) {
  RankCapacity c;
  c.ranks_here = ranksOnThisMachine(job);
  c.cores = cores;
  c.allowed = kRanksPerCore * cores;
  if (c.ranks_here <= c.allowed) return c;
  const bool servers = processCount(job) != job.parallel.ranks;
  c.refusal = "parallel.ranks = " + std::to_string(job.parallel.ranks) + ": " +
              std::to_string(c.ranks_here) + " rank processes" +
              (servers ? " (with parallel.servers)" : "") +
              " would start on this machine, which allows at most " + std::to_string(c.allowed) +
              " (" + std::to_string(kRanksPerCore) + " a core, " + std::to_string(cores) +
              (cores == 1 ? " core" : " cores") +
              " usable by this process). Use fewer ranks, or run the job where it has the "
              "cores: launch.hosts, launch.hostfile or launch.scheduler = \"slurm\"";
  return c;
}

}  // namespace ranklab
