#include "app/cli/memory_check.h"

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "app/cli/rank_capacity.h"

namespace ranklab {

namespace {

// A /proc/meminfo line's value ("MemAvailable:   123456 kB"), in bytes; 0 where it is absent.
size_t meminfoBytes(const std::string& key) {
  std::ifstream file("/proc/meminfo");
  std::string name, unit;
  size_t kib = 0;
  while (file >> name >> kib) {
    std::getline(file, unit);
    if (name == key + ":") return kib * 1024;
  }
  return 0;
}

// A cgroup v2 file's number ("max" and a missing file: none).
std::optional<size_t> cgroupBytes(const char* file_name) {
  std::ifstream file(std::string("/sys/fs/cgroup/") + file_name);
  std::string text;
  if (!(file >> text) || text == "max") return std::nullopt;
  try {
    return static_cast<size_t>(std::stoull(text));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// launch.hosts filled in order (rank_capacity.h), each host holding its ranks' sum.
std::vector<HostNeed> hostsFromList(const std::vector<std::string>& entries,
                                    const MemoryEstimate& estimate) {
  std::vector<HostNeed> hosts;
  for (const std::string& entry : entries) {
    const std::string name = entry.substr(0, entry.find(':'));
    hosts.push_back({name, 0, 0, 0, isThisMachine(name)});
  }
  const auto placed = hostOfEachRank(entries, static_cast<int>(estimate.ranks.size()));
  for (size_t rank = 0; rank < placed.size(); ++rank) {
    HostNeed& host = hosts[placed[rank]];
    if (host.ranks++ == 0) host.shared = host.bytes = kHostSharedBytes;
    host.bytes += estimate.ranks[rank].total();
  }
  return hosts;
}

size_t sumOf(const MemoryEstimate& estimate) {
  size_t sum = 0;
  for (const RankMemory& r : estimate.ranks) sum += r.total();
  return sum;
}

// Where the ranks run and what each host needs; `unchecked` says why they are not weighed
// against this machine.
std::vector<HostNeed> hostNeeds(const JobSpec& job, const MemoryEstimate& estimate,
                                std::string& unchecked) {
  const int n = static_cast<int>(estimate.ranks.size());
  if (runsUnderSlurm(job)) {
    const int nodes = job.launch.nodes;
    unchecked = nodes > 0 ? "Slurm's nodes are not this machine: not checked here"
                          : "Slurm places the ranks (launch.nodes = 0): the ranks per node are "
                            "not known, not checked here";
    if (nodes <= 0) return {};
    const int per_node = (n + nodes - 1) / nodes;
    return {{"each Slurm node", per_node, per_node * estimate.peak().total() + kHostSharedBytes,
             kHostSharedBytes, false}};
  }
  if (!job.launch.hostfile.empty()) {
    unchecked = "launch.hostfile places the ranks: the ranks per host are not read, not checked";
    return {};
  }
  if (!job.launch.hosts.empty()) return hostsFromList(job.launch.hosts, estimate);
  return {{"this machine", n, sumOf(estimate) + kHostSharedBytes, kHostSharedBytes, true}};
}

std::string refusalText(const JobSpec& job, const MemoryCheck& check, const HostNeed& here) {
  const RankMemory& peak = check.estimate.peak();
  // One rank alone too big: the model's key; else the number of ranks.
  std::string key = peak.total() > check.machine.available ? drivingKey(job) : "";
  if (key.empty()) key = "parallel.ranks = " + std::to_string(job.parallel.ranks);
  std::ostringstream text;
  text << key << ": " << (check.estimate.ranksDiffer() ? "the largest rank" : "each rank")
       << " needs ~" << byteText(peak.total()) << " (" << partsText(peak) << "); " << here.ranks
       << (here.ranks == 1 ? " rank" : " ranks") << " on this machine need ~"
       << byteText(here.bytes) << "; it has " << byteText(check.machine.available)
       << (check.machine.cgroup_limited ? " available under its cgroup's memory.max" : " available")
       << ". Make the model smaller, use fewer ranks, or pass --ignore-memory-estimate";
  return text.str();
}

}  // namespace

MachineMemory machineMemory() {
  MachineMemory m;
  m.total = meminfoBytes("MemTotal");
  m.available = meminfoBytes("MemAvailable");
  if (const auto limit = cgroupBytes("memory.max")) {
    const size_t used = cgroupBytes("memory.current").value_or(0);
    const size_t left = *limit > used ? *limit - used : 0;
    m.total = std::min(m.total, *limit);
    if (left < m.available) m.available = left, m.cgroup_limited = true;
  }
  return m;
}

MemoryCheck checkMemory(const JobSpec& job, const MachineMemory& machine) {
  MemoryCheck check;
  check.estimate = estimateMemory(job);
  check.machine = machine;
  check.hosts = hostNeeds(job, check.estimate, check.unchecked);
  for (const HostNeed& host : check.hosts) {
    if (host.here && host.bytes > machine.available) {
      check.refusal = refusalText(job, check, host);
      break;
    }
  }
  return check;
}

void printMemory(std::ostream& out, const MemoryCheck& check) {
  const MemoryEstimate& e = check.estimate;
  const RankMemory& peak = e.peak();
  out << "memory (estimated peak per rank, docs/memory.md): rank " << peak.rank << " ~"
      << byteText(peak.total()) << " (" << partsText(peak) << ")\n";
  if (e.ranksDiffer()) {
    out << "  rank  stage  total\n";
    for (const RankMemory& r : e.ranks) {
      out << "  " << std::setw(4) << r.rank << "  " << std::setw(5)
          << (r.server ? std::string("server") : std::to_string(r.stage)) << "  "
          << byteText(r.total()) << "\n";
    }
  }
  for (const HostNeed& host : check.hosts) {
    out << "  " << host.host << ": " << host.ranks
        << (host.ranks == 1 ? " rank needs ~" : " ranks need ~") << byteText(host.bytes) << " ("
        << byteText(host.shared) << " of it libraries and launcher, held once)";
    if (host.here)
      out << " of " << byteText(check.machine.available) << " available ("
          << byteText(check.machine.total) << " in all)";
    out << "\n";
  }
  if (!check.unchecked.empty()) out << "  " << check.unchecked << "\n";
}

nlohmann::json memoryJson(const MemoryCheck& check) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankMemory& r : check.estimate.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"stage", r.stage},
                     {"server", r.server},
                     {"params_bytes", r.params},
                     {"grads_bytes", r.grads},
                     {"optimizer_bytes", r.optimizer},
                     {"activations_bytes", r.activations},
                     {"output_gradients_bytes", r.workspace},
                     {"buffers_bytes", r.buffers},
                     {"data_bytes", r.data},
                     {"process_bytes", r.baseline},
                     {"total_bytes", r.total()}});
  }
  nlohmann::json hosts = nlohmann::json::array();
  for (const HostNeed& h : check.hosts)
    hosts.push_back({{"host", h.host},
                     {"ranks", h.ranks},
                     {"bytes", h.bytes},
                     {"shared_bytes", h.shared},
                     {"here", h.here}});
  size_t here = 0;
  for (const HostNeed& h : check.hosts) here += h.here ? h.bytes : 0;
  return {{"per_rank", ranks},
          {"peak_rank", check.estimate.peak().rank},
          {"hosts", hosts},
          {"host_total_bytes", here},
          {"host_available_bytes", check.machine.available},
          {"host_memory_bytes", check.machine.total},
          {"unchecked", check.unchecked},
          {"fits", check.fits()},
          {"refusal", check.refusal}};
}

}  // namespace ranklab
