#include "app/cli/bench_command.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <thread>

#include "comm/collectives/allreduce_registry.h"
#include "engine/job/job_spec.h"
#include "launch/bench/bench_args.h"
#include "launch/bench_runner.h"

namespace ranklab {

namespace {

// The algorithms come from the registry, so a new one shows here without an edit.
std::string benchUsage() {
  std::string algorithms;
  for (const auto& name : allreduceAlgorithms())
    algorithms += (algorithms.empty() ? "" : ",") + name;
  return "usage: ranklab bench allreduce [--worlds 2,4] [--algorithms " + algorithms +
         "]\n         [--min-bytes 4] [--max-bytes 64M] [--ranks-per-host N] [--repeats 3] "
         "[--seconds 0.1]\n         [--json] [--hosts a:2,b:2] [--mca name=value ...]";
}

// "64M", "4K", "4096" -> bytes.
size_t parseBytes(const std::string& flag, const std::string& text) {
  size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const size_t scale = unit.empty() ? 1 : unit == "K" ? 1 << 10 : unit == "M" ? 1 << 20 : 0;
  if (used == 0 || scale == 0)
    throw std::invalid_argument(flag + " takes a size like 4, 4K or 64M, got \"" + text + "\"");
  return static_cast<size_t>(value) * scale;
}

// The same bound as a job's parallel.ranks: more ranks than that only swamps the machine.
constexpr int kMaxWorld = 256;

int parseInt(const std::string& flag, const std::string& text, int minimum,
             int maximum = std::numeric_limits<int>::max()) {
  try {
    size_t used = 0;
    const int value = std::stoi(text, &used);
    if (used == text.size() && value >= minimum && value <= maximum) return value;
  } catch (const std::logic_error&) {
  }
  const std::string allowed = maximum == std::numeric_limits<int>::max()
                                  ? ">= " + std::to_string(minimum)
                                  : std::to_string(minimum) + ".." + std::to_string(maximum);
  throw std::invalid_argument(flag + " takes an integer " + allowed + ", got \"" + text + "\"");
}

// A timed batch's length: above 0 (at least 3 all-reduces are timed however short), at most
// a minute per size.
double parseSeconds(const std::string& flag, const std::string& text) {
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size() && value > 0 && value <= 60) return value;
  } catch (const std::logic_error&) {
  }
  throw std::invalid_argument(flag + " takes seconds > 0 and <= 60, got \"" + text + "\"");
}

// "2,4" -> its items; an empty list would run nothing and still look like success.
std::vector<std::string> nonEmptyList(const std::string& flag, const std::string& text) {
  auto items = splitCommaList(text);
  if (items.empty())
    throw std::invalid_argument(flag + " takes a comma-separated list, got \"" + text + "\"");
  return items;
}

// Checked here, before any rank starts: a rank's error would only show as mpirun's abort.
std::vector<std::string> checkedAlgorithms(const std::string& flag, const std::string& text) {
  auto items = nonEmptyList(flag, text);
  const auto& known = allreduceAlgorithms();
  for (const auto& a : items) {
    if (std::find(known.begin(), known.end(), a) != known.end()) continue;
    // shm-sharded is a parallel.algorithm, but a sharded update, not an all-reduce.
    const std::string why = a == kSharedModelAlgorithm
                                ? " (shm-sharded sums and updates a shared model in training; it "
                                  "is not an all-reduce)"
                                : "";
    throw std::invalid_argument(flag + ": unknown all-reduce algorithm \"" + a + "\"" + why +
                                "; allowed: " + allreduceAlgorithmList());
  }
  return items;
}

volatile std::sig_atomic_t g_bench_stop = 0;

// Ctrl-C ends the ranks too (they run in mpirun's own process group).
void stopBenchOnSignal(int) {
  g_bench_stop = 1;
}

std::string format(const char* pattern, auto... values) {
  char text[128];
  std::snprintf(text, sizeof text, pattern, values...);
  return text;
}

}  // namespace

namespace {

// The algorithm the others are measured against: its registry entry says so (mpi).
std::string referenceAlgorithm() {
  for (const auto& a : allreduceRegistry())
    if (a.reference) return a.name;
  return "";
}

// Ratio columns "X/reference" for every other algorithm that ran, where the reference ran.
std::vector<std::string> ratioColumns(const std::vector<std::string>& algorithms) {
  const std::string reference = referenceAlgorithm();
  std::vector<std::string> columns;
  if (std::count(algorithms.begin(), algorithms.end(), reference) == 0) return columns;
  for (const auto& a : algorithms)
    if (a != reference) columns.push_back(a);
  return columns;
}

double busbw(const std::map<std::string, AllreduceBenchRow>& by_algorithm, const std::string& a) {
  const auto it = by_algorithm.find(a);
  return it == by_algorithm.end() ? 0 : it->second.busbw_gbs;
}

}  // namespace

namespace {

// The floor of each world, once: what no exchange between two ranks can beat.
void printFloors(std::ostream& out, const std::vector<AllreduceBenchRow>& rows) {
  std::map<int, double> floors;
  for (const auto& row : rows) floors[row.world] = row.floor_seconds;
  out << "floor: a cache line one way between ranks 0 and 1 in shared memory, half the best "
         "of 5 x 2,000 round trips:";
  for (const auto& [world, floor] : floors)
    out << (floor > 0 ? format(" world %d %.3f us;", world, floor * 1e6)
                      : format(" world %d none (no shared memory);", world));
  out << "\n";
  if (std::any_of(floors.begin(), floors.end(), [](const auto& f) {
        return f.first > static_cast<int>(std::thread::hardware_concurrency());
      }))
    out << "(a world beyond this machine's cores waits for the scheduler on every call, which "
           "the floor does not)\n";
}

// The fastest algorithm's time over the floor, and how each algorithm moved the size.
void printFloorAndPaths(std::ostream& out,
                        const std::map<std::string, AllreduceBenchRow>& by_algorithm,
                        const std::vector<std::string>& algorithms) {
  double best = 0, floor = 0;
  std::string paths;
  for (const auto& a : algorithms) {
    const auto it = by_algorithm.find(a);
    if (it == by_algorithm.end()) continue;
    const AllreduceBenchRow& row = it->second;
    if (best == 0 || row.seconds < best) best = row.seconds;
    floor = row.floor_seconds;
    if (!row.path.empty()) paths += " " + a + ":" + row.path;
  }
  out << (floor > 0 ? format(" %7.1f", best / floor) : format(" %7s", "-")) << paths;
}

}  // namespace

void printBenchTable(std::ostream& out, const std::vector<AllreduceBenchRow>& rows,
                     const std::vector<std::string>& algorithms) {
  // (world, bytes) -> algorithm -> row, in the order the rows came.
  std::map<std::pair<int, size_t>, std::map<std::string, AllreduceBenchRow>> table;
  for (const auto& row : rows) table[{row.world, row.bytes}][row.algorithm] = row;
  const auto ratios = ratioColumns(algorithms);
  out << "all-reduce, float sum in place; busbw = algbw * 2(n-1)/n in GB/s; time per call in us\n"
      << "(best of alternating batches; every result checked against the closed-form sum;\n"
      << " x floor: the fastest one's time over the floor; path: how each moved the size)\n";
  printFloors(out, rows);
  out << format("%5s %10s", "world", "bytes");
  for (const auto& a : algorithms)
    out << format(" %12s %8s", (a.substr(0, 9) + " us").c_str(), "busbw");
  const std::string reference = referenceAlgorithm();
  for (const auto& a : ratios) out << format(" %9s", (a.substr(0, 5) + "/" + reference).c_str());
  out << format(" %6s %7s %s\n", "check", "x floor", "path");
  for (const auto& [key, by_algorithm] : table) {
    out << format("%5d %10zu", key.first, key.second);
    bool ok = true;
    for (const auto& a : algorithms) {
      const auto it = by_algorithm.find(a);
      if (it == by_algorithm.end()) {
        out << format(" %12s %8s", "-", "-");
        continue;
      }
      out << format(" %12.1f %8.3f", it->second.seconds * 1e6, it->second.busbw_gbs);
      ok = ok && it->second.verified;
    }
    const double peer = busbw(by_algorithm, reference);
    for (const auto& a : ratios)
      out << (peer > 0 ? format(" %9.2f", busbw(by_algorithm, a) / peer) : format(" %9s", "-"));
    out << format(" %6s", ok ? "ok" : "FAIL");
    printFloorAndPaths(out, by_algorithm, algorithms);
    out << "\n";
  }
}

int benchCommand(const std::vector<std::string>& args, std::ostream& out) {
  if (args.empty() || args[0] != "allreduce")
    throw std::invalid_argument(std::string("bench takes allreduce\n") + benchUsage());
  BenchLaunch launch;
  bool json = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--json") {
      json = true;
      continue;
    }
    if (i + 1 >= args.size()) throw std::invalid_argument(flag + " needs a value\n" + benchUsage());
    const std::string& value = args[++i];
    if (flag == "--worlds") {
      launch.worlds.clear();
      for (const auto& w : nonEmptyList(flag, value))
        launch.worlds.push_back(parseInt(flag, w, 1, kMaxWorld));
    } else if (flag == "--algorithms") {
      launch.options.algorithms = checkedAlgorithms(flag, value);
    } else if (flag == "--min-bytes") {
      launch.options.min_bytes = parseBytes(flag, value);
    } else if (flag == "--max-bytes") {
      launch.options.max_bytes = parseBytes(flag, value);
    } else if (flag == "--ranks-per-host") {
      launch.options.ranks_per_host = parseInt(flag, value, 0, kMaxWorld);
    } else if (flag == "--hosts") {
      launch.placement.hosts = nonEmptyList(flag, value);
    } else if (flag == "--mca") {
      if (value.find('=') == std::string::npos || value.front() == '=')
        throw std::invalid_argument("--mca takes name=value, got \"" + value + "\"");
      launch.placement.mca.push_back(value);
    } else if (flag == "--repeats") {
      launch.options.repeats = parseInt(flag, value, 1);
    } else if (flag == "--seconds") {
      launch.options.seconds_per_size = parseSeconds(flag, value);
    } else {
      throw std::invalid_argument("unknown option " + flag + "\n" + benchUsage());
    }
  }
  if (launch.options.min_bytes < 4 || launch.options.min_bytes > launch.options.max_bytes)
    throw std::invalid_argument("--min-bytes must be >= 4 and <= --max-bytes");
  g_bench_stop = 0;
  launch.stop = &g_bench_stop;
  std::signal(SIGINT, stopBenchOnSignal);
  std::signal(SIGTERM, stopBenchOnSignal);
  const auto rows = runAllreduceBenchmark(launch);
  bool all_verified = true;
  for (const auto& row : rows) all_verified = all_verified && row.verified;
  if (json) {
    auto list = nlohmann::json::array();
    for (const auto& row : rows) list.push_back(nlohmann::json::parse(benchRowJson(row)));
    out << list.dump(2) << "\n";
  } else {
    printBenchTable(out, rows, launch.options.algorithms);
  }
  return all_verified ? 0 : 1;
}

}  // namespace ranklab
