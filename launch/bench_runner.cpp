#include "launch/bench_runner.h"

#include <chrono>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "launch/bench/bench_args.h"
#include "launch/child_process.h"
#include "launch/host_placement.h"
#include "launch/job_runner.h"

namespace ranklab {

bool parseBenchRow(const std::string& line, AllreduceBenchRow& row) {
  if (line.empty() || line.front() != '{') return false;
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.contains("algorithm") || !j.contains("busbw_gbs")) return false;
  row.algorithm = j.at("algorithm").get<std::string>();
  row.world = j.at("world").get<int>();
  row.bytes = j.at("bytes").get<size_t>();
  row.iterations = j.at("iterations").get<int>();
  row.seconds = j.at("seconds").get<double>();
  row.algbw_gbs = j.at("algbw_gbs").get<double>();
  row.busbw_gbs = j.at("busbw_gbs").get<double>();
  row.verified = j.at("verified").get<bool>();
  row.max_error = j.at("max_error").get<double>();
  row.path = j.value("path", "");
  row.floor_seconds = j.value("floor_seconds", 0.0);
  return true;
}

namespace {

// Pumps output until mpirun exits; on a stop request SIGTERM, then SIGKILL after a grace
// period. True when stopped.
bool waitForBench(ChildProcess& child, const volatile std::sig_atomic_t* stop,
                  const ChildProcess::LineHandler& on_line) {
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> stop_sent;
  while (child.running()) {
    child.pump(100, on_line);
    if (stop != nullptr && *stop != 0 && !stop_sent) {
      child.terminate();
      stop_sent = Clock::now();
    } else if (stop_sent && Clock::now() - *stop_sent > std::chrono::seconds(5)) {
      child.kill();
    }
  }
  return stop_sent.has_value();
}

}  // namespace

std::vector<AllreduceBenchRow> runAllreduceBenchmark(const BenchLaunch& launch) {
  const std::string worker =
      launch.worker_path.empty() ? executableDir() + "/ranklab-worker" : launch.worker_path;
  if (!std::filesystem::exists(worker))
    throw std::runtime_error(worker + ": ranklab-worker not found (build it, or pass its path)");
  std::vector<AllreduceBenchRow> rows;
  for (int world : launch.worlds) {
    std::vector<std::string> argv{launch.mpirun, "--oversubscribe", "--bind-to", "none"};
    for (const auto& arg : placementArguments(launch.placement)) argv.push_back(arg);
    argv.insert(argv.end(), {"-np", std::to_string(world), worker});
    for (const auto& arg : benchArgs(launch.options)) argv.push_back(arg);
    const MpiSegmentFolder segments;
    const bool on_hosts = !launch.placement.hosts.empty() || !launch.placement.hostfile.empty();
    ChildProcess child(argv, on_hosts ? mpiEnvironment() : segments.environment());
    std::deque<std::string> tail;  // the last lines, for the failure message
    size_t found = 0;
    auto on_line = [&](bool, const std::string& line) {
      AllreduceBenchRow row;
      if (parseBenchRow(line, row)) {
        rows.push_back(row);
        ++found;
        return;
      }
      tail.push_back(line);
      if (tail.size() > 8) tail.pop_front();
    };
    const bool stopped = waitForBench(child, launch.stop, on_line);
    if (stopped)
      throw std::runtime_error("bench allreduce, world " + std::to_string(world) +
                               ": interrupted; the ranks were stopped");
    for (int i = 0; i < 10; ++i) child.pump(10, on_line);
    if (child.exitCode() != 0 || found == 0) {
      std::string message = "bench allreduce, world " + std::to_string(world) +
                            ": mpirun exited with status " + std::to_string(child.exitCode());
      if (found == 0) message += " and printed no results";
      for (const auto& line : tail) message += "\n  " + line;
      throw std::runtime_error(message);
    }
  }
  return rows;
}

}  // namespace ranklab
