#include "launch/command_ranks.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "comm/steady_clock.h"
#include "comm/telemetry/curve_keys.h"

namespace ranklab {

namespace {

// A TCP port on loopback free a moment ago: the rendezvous of rank 0's process group.
int freePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0 &&
                     getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0;
  close(fd);
  if (!bound) throw std::runtime_error("no free TCP port for MASTER_PORT");
  return ntohs(address.sin_port);
}

// Rank 0's host: the first of launch.hosts (mpirun places rank 0 there), else this machine.
std::string masterAddress(const JobSpec& job) {
  if (job.launch.hosts.empty()) return "127.0.0.1";
  const std::string& first = job.launch.hosts.front();
  return first.substr(0, first.find(':'));
}

std::string pythonPath(const std::string& built) {
  const char* current = std::getenv("PYTHONPATH");
  return current && *current ? built + ":" + current : built;
}

// Each rank's torchrun contract from Open MPI's own variables, then the command.
const char* kFromOpenMpi =
    "export RANK=$OMPI_COMM_WORLD_RANK WORLD_SIZE=$OMPI_COMM_WORLD_SIZE "
    "LOCAL_RANK=$OMPI_COMM_WORLD_LOCAL_RANK LOCAL_WORLD_SIZE=$OMPI_COMM_WORLD_LOCAL_SIZE; "
    "exec \"$@\"";

}  // namespace

std::string builtPythonDir(const std::string& executable_dir) {
  std::error_code error;
  const auto dir = std::filesystem::weakly_canonical(executable_dir + "/../python", error);
  return !error && std::filesystem::exists(dir / "ranklab" / "__init__.py", error) ? dir.string()
                                                                                   : "";
}

std::vector<std::string> commandEnvironment(const JobSpec& job, const CommandTelemetry& telemetry,
                                            const std::string& python_dir) {
  std::vector<std::string> env{"WORLD_SIZE=" + std::to_string(processCount(job)),
                               "LOCAL_WORLD_SIZE=" + std::to_string(processCount(job)),
                               "MASTER_ADDR=" + masterAddress(job),
                               "MASTER_PORT=" + std::to_string(freePort()),
                               "RANKLAB_TELEMETRY_ENDPOINT=" + telemetry.endpoint,
                               "RANKLAB_RUN_ID=" + telemetry.wire_id,
                               "RANKLAB_HEARTBEAT_MS=" + std::to_string(telemetry.heartbeat_ms),
                               "RANKLAB_SPAN_EVERY=" + std::to_string(telemetry.span_every)};
  // One zero for every rank's clock (CLOCK_MONOTONIC is the machine's), where they all run
  // on this machine: the timeline lines them up exactly. Elsewhere each counts from its watch().
  if (!runsOnHosts(job)) env.push_back("RANKLAB_CLOCK_ZERO_NS=" + std::to_string(steadyNowNs()));
  if (!python_dir.empty()) env.push_back("PYTHONPATH=" + pythonPath(python_dir));
  if (!std::getenv("OMP_NUM_THREADS")) env.push_back("OMP_NUM_THREADS=1");
  return env;
}

std::string commandDir(const std::string& job_path) {
  if (job_path.empty()) return "";
  std::error_code error;
  const auto dir = std::filesystem::absolute(job_path, error).parent_path();
  return error ? "" : dir.string();
}

std::vector<std::string> commandLine(const JobSpec& job, const std::string& mpirun,
                                     const std::vector<std::string>& placement,
                                     const std::string& dir, const std::string& python_dir) {
  const LaunchSpec& l = job.launch;
  const std::string ranks = std::to_string(processCount(job));
  std::vector<std::string> argv;
  if (l.launcher == Launcher::kTorchrun) {
    argv = {"torchrun", "--nproc_per_node", ranks, "--no_python"};
  } else if (l.launcher == Launcher::kMpirun || runsUnderSlurm(job)) {
    argv = {mpirun, "--oversubscribe", "--bind-to", "none", "--tag-output"};
    argv.insert(argv.end(), placement.begin(), placement.end());
    if (!dir.empty()) argv.insert(argv.end(), {"-wdir", dir});
    for (const char* name : {"RANKLAB_TELEMETRY_ENDPOINT", "RANKLAB_RUN_ID", "RANKLAB_HEARTBEAT_MS",
                             "RANKLAB_SPAN_EVERY", "MASTER_ADDR", "MASTER_PORT", "OMP_NUM_THREADS"})
      argv.insert(argv.end(), {"-x", name});
    if (!runsOnHosts(job)) argv.insert(argv.end(), {"-x", "RANKLAB_CLOCK_ZERO_NS"});
    // Only when set (commandEnvironment sets it from the build tree): -x warns of one unset.
    if (!python_dir.empty() || std::getenv("PYTHONPATH"))
      argv.insert(argv.end(), {"-x", "PYTHONPATH"});
    if (job.telemetry.encrypt) argv.insert(argv.end(), {"-x", kTelemetryKeysVariable});
    argv.insert(argv.end(), {"-np", ranks, "/bin/sh", "-c", kFromOpenMpi, "ranklab-rank"});
  }
  argv.insert(argv.end(), l.command.begin(), l.command.end());
  return argv;
}

void requireProgram(const std::string& program) {
  const auto usable = [](const std::filesystem::path& path) {
    std::error_code error;
    return std::filesystem::is_regular_file(path, error) && access(path.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) {
    if (!usable(program))
      throw std::runtime_error("launch.command: " + program +
                               ": no such program, or not executable");
    return;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    if (usable(std::filesystem::path(dir.empty() ? "." : dir) / program)) return;
    start = end + 1;
  }
  throw std::runtime_error("launch.command: " + program + ": command not found (PATH is " + dirs +
                           ")");
}

std::string commandHint(const std::deque<std::string>& last_errors,
                        const std::vector<int>& never_heard) {
  for (const std::string& line : last_errors)
    if (line.find("No module named 'ranklab") != std::string::npos)
      return "the ranks cannot import ranklab's Python package: install ranklab's .deb, or put "
             "the folder that holds ranklab/ on PYTHONPATH (docs/pytorch.md)";
  if (never_heard.empty()) return "";
  std::string ranks;
  for (size_t i = 0; i < never_heard.size() && i < 16; ++i)
    ranks += (i ? ", " : "") + std::to_string(never_heard[i]);
  if (never_heard.size() > 16) ranks += " and " + std::to_string(never_heard.size() - 16) + " more";
  return "rank" + std::string(never_heard.size() > 1 ? "s " : " ") + ranks +
         " never reported: a rank is heard once it calls ranklab.torch.watch(model, optimizer) "
         "(docs/pytorch.md); did it fail before, or does the command never call it?";
}

LocalRanks::LocalRanks(int world, const std::vector<std::string>& argv,
                       const std::vector<std::string>& environment, const std::string& dir)
    : ended_(static_cast<size_t>(world), false) {
  for (int r = 0; r < world; ++r) {
    auto env = environment;
    env.push_back("RANK=" + std::to_string(r));
    env.push_back("LOCAL_RANK=" + std::to_string(r));
    ranks_.push_back(std::make_unique<ChildProcess>(argv, env, dir));
  }
}

void LocalRanks::pump(int wait_ms, const LineHandler& on_line) {
  for (size_t r = 0; r < ranks_.size(); ++r) {
    const std::string tag = "[0," + std::to_string(r) + "]";
    ranks_[r]->pump(r == 0 ? wait_ms : 0, [&](bool is_stderr, const std::string& line) {
      on_line(is_stderr, tag + (is_stderr ? "<stderr>:" : "<stdout>:") + line);
    });
  }
  for (; !verdicts_.empty(); verdicts_.pop_front()) on_line(true, verdicts_.front());
}

bool LocalRanks::running() {
  bool any = false;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    if (ended_[r]) continue;
    if (ranks_[r]->running()) {
      any = true;
      continue;
    }
    ended_[r] = true;
    const int code = ranks_[r]->exitCode();
    if (code == 0 || first_failed_ >= 0) continue;
    first_failed_ = static_cast<int>(r);
    exit_code_ = code;
    // mpirun's words: MpirunVerdict reads them.
    const std::string who = "ranklab: process rank " + std::to_string(r) + " with PID " +
                            std::to_string(ranks_[r]->pid()) + " on node localhost exited ";
    verdicts_.push_back(code > 128 ? who + "on signal " + std::to_string(code - 128) + " (" +
                                         strsignal(code - 128) + ")"
                                   : who + "with code " + std::to_string(code));
    failed_at_ = std::chrono::steady_clock::now();
  }
  // The others stopped a moment later, as mpirun stops them: the launcher's watch names the
  // failed rank (its process gone, no bye) first, after its last step.
  if (first_failed_ >= 0 && !stopped_others_ &&
      std::chrono::steady_clock::now() - failed_at_ >= kStopOthersAfter) {
    terminate();
    stopped_others_ = true;
  }
  return any;
}

void LocalRanks::terminate() {
  for (auto& rank : ranks_) rank->terminate();
}

void LocalRanks::kill() {
  for (auto& rank : ranks_) rank->kill();
}

std::string LocalRanks::name() const {
  return first_failed_ >= 0 ? "rank " + std::to_string(first_failed_) : "the ranks";
}

}  // namespace ranklab
