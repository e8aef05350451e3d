#include "launch/host_placement.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "storage/bounded_read.h"

namespace ranklab {
namespace {

constexpr char kLoopback[] = "127.0.0.1";

std::string joined(const std::vector<std::string>& words, const std::string& separator) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : separator) + word;
  return out;
}

std::optional<in_addr> resolveIPv4(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || !found) return std::nullopt;
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(found, &freeaddrinfo);
  return reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr;
}

// The address the kernel would send from to reach `to` (a UDP connect sends nothing).
std::optional<in_addr> sourceAddressTowards(in_addr to) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in peer{};
  peer.sin_family = AF_INET;
  peer.sin_port = htons(9);  // discard; never used
  peer.sin_addr = to;
  sockaddr_in self{};
  socklen_t length = sizeof self;
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&peer), sizeof peer) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&self), &length) == 0;
  close(fd);
  if (!ok) return std::nullopt;
  return self.sin_addr;
}

std::string text(in_addr address) {
  char buffer[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &address, buffer, sizeof buffer);
  return buffer;
}

// Whether the job's own mca sets a parameter of this framework ("btl", "oob").
bool mcaSets(const LaunchSpec& launch, const std::string& framework) {
  for (const auto& entry : launch.mca) {
    const std::string name = entry.substr(0, entry.find('='));
    if (name == framework || name.rfind(framework + "_", 0) == 0) return true;
  }
  return false;
}

// Under Slurm the nodes are known only once the job runs: the ranks are sent to the
// address this machine's name resolves to (a cluster's login node is known by its name on
// the cluster's network); where it resolves to loopback, to 127.0.0.1 (the nodes are this
// machine, or launch.telemetry_address must say better).
std::string addressOfThisHost() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  const auto address = resolveIPv4(name);
  if (!address) {
    throw std::runtime_error(std::string("this machine's name \"") + name +
                             "\" does not resolve to an IPv4 address, so the address Slurm's "
                             "nodes should send telemetry to is unknown; set "
                             "launch.telemetry_address");
  }
  const auto source = sourceAddressTowards(*address);
  if (!source || (ntohl(source->s_addr) >> 24) == 127) return kLoopback;
  return text(*source);
}

// The host file's text, bounded and never blocking (a FIFO, a device is refused).
std::istringstream hostfileText(const std::string& path) {
  try {
    return std::istringstream(readBoundedFile(path, {uint64_t{1} << 20, "host files"}));
  } catch (const FileReadError& e) {
    throw std::runtime_error(path + " (launch.hostfile): " + e.cause());
  }
}

}  // namespace

std::vector<std::string> placementArguments(const LaunchSpec& launch) {
  std::vector<std::string> args;
  if (!launch.hosts.empty()) args = {"--host", joined(launch.hosts, ",")};
  if (!launch.hostfile.empty()) args = {"--hostfile", launch.hostfile};
  if (launch.hosts.empty() && launch.hostfile.empty() && launch.scheduler != Scheduler::kSlurm) {
    // One machine: the ranks talk over shared memory only, with no TCP listener on any
    // interface, and mpirun's own TCP on loopback (issue 33, item 10); the job's mca wins.
    if (!mcaSets(launch, "btl")) args.insert(args.end(), {"--mca", "btl", "self,vader"});
    if (!mcaSets(launch, "oob"))
      args.insert(args.end(), {"--mca", "oob_tcp_if_include", "lo", "--mca",
                               "oob_tcp_disable_ipv6_family", "1"});
  }
  for (const auto& entry : launch.mca) {
    const auto equals = entry.find('=');  // the job's check made sure there is one
    args.insert(args.end(), {"--mca", entry.substr(0, equals), entry.substr(equals + 1)});
  }
  return args;
}

std::vector<std::string> hostNames(const LaunchSpec& launch) {
  std::vector<std::string> names;
  for (const auto& host : launch.hosts) names.push_back(host.substr(0, host.find(':')));
  if (launch.hostfile.empty()) return names;
  std::istringstream file = hostfileText(launch.hostfile);
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string name;
    if (words >> name) names.push_back(name);
  }
  if (names.empty())
    throw std::runtime_error(launch.hostfile + " (launch.hostfile): names no host");
  return names;
}

std::string telemetryAddress(const LaunchSpec& launch) {
  if (!launch.telemetry_address.empty()) return launch.telemetry_address;
  if (launch.scheduler == Scheduler::kSlurm) return addressOfThisHost();
  for (const auto& host : hostNames(launch)) {
    const auto address = resolveIPv4(host);
    if (!address) {
      throw std::runtime_error(
          std::string(launch.hostfile.empty() ? "launch.hosts" : launch.hostfile) +
          ": cannot resolve host \"" + host +
          "\" to an IPv4 address, so the address its ranks should send telemetry to is "
          "unknown; set launch.telemetry_address to this machine's address they can reach");
    }
    const auto source = sourceAddressTowards(*address);
    const bool loopback = source && (ntohl(source->s_addr) >> 24) == 127;  // this machine
    if (source && !loopback) return text(*source);
  }
  return kLoopback;
}

}  // namespace ranklab
