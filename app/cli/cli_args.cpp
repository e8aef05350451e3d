#include "app/cli/cli_args.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "engine/job/job_spec.h"
#include "storage/run_store.h"

namespace ranklab {

namespace {

int parseRanks(const std::string& n) {
  size_t used = 0;
  int ranks = 0;
  try {
    ranks = std::stoi(n, &used);
  } catch (const std::exception&) {
  }
  if (used == 0 || used != n.size())
    throw UsageError("--ranks: \"" + n + "\" is not a number (allowed: 1.." +
                     std::to_string(kMaxRanks) + ")");
  return ranks;
}

// "a:2,b:2" -> ["a:2", "b:2"] as TOML.
std::string hostsArray(const std::string& list) {
  nlohmann::json hosts = nlohmann::json::array();
  std::string::size_type start = 0;
  while (start <= list.size()) {
    const auto comma = std::min(list.find(',', start), list.size());
    hosts.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return hosts.dump();
}

// A whole number in [low, high], or a UsageError naming the option and the range.
int64_t parseCount(const std::string& option, const std::string& text, int64_t low, int64_t high) {
  size_t used = 0;
  int64_t n = 0;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || n < low || n > high)
    throw UsageError(option + ": \"" + text + "\" is not a whole number from " +
                     std::to_string(low) + " to " + std::to_string(high));
  return n;
}

// "FIRST:LAST", two step numbers, FIRST <= LAST.
std::pair<int64_t, int64_t> parseStepRange(const std::string& text) {
  const auto colon = text.find(':');
  const auto bad = [&text] {
    return UsageError("--step-range: \"" + text +
                      "\" is not FIRST:LAST, two step numbers with FIRST <= LAST (e.g. 100:200)");
  };
  if (colon == std::string::npos) throw bad();
  int64_t first = 0, last = 0;
  try {
    first = parseCount("--step-range", text.substr(0, colon), 0, int64_t{1} << 40);
    last = parseCount("--step-range", text.substr(colon + 1), 0, int64_t{1} << 40);
  } catch (const UsageError&) {
    throw bad();
  }
  if (first > last) throw bad();
  return {first, last};
}

// "0-15,777": ranks and ranges of ranks, comma-separated.
std::vector<int> parseRankList(const std::string& text) {
  std::vector<int> ranks;
  const auto bad = [&text](const std::string& item) {
    return UsageError("--rank-list: \"" + item + "\" in \"" + text +
                      "\" is not a rank or a range of ranks (e.g. 0-15,777; ranks 0.." +
                      std::to_string(kMaxRanks - 1) + ")");
  };
  std::string::size_type start = 0;
  while (start <= text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const auto dash = item.find('-', 1);
    try {
      const int64_t from = parseCount("--rank-list", item.substr(0, dash), 0, kMaxRanks - 1);
      const int64_t to =
          dash == std::string::npos
              ? from
              : parseCount("--rank-list", item.substr(dash + 1), from, kMaxRanks - 1);
      for (int64_t r = from; r <= to; ++r) ranks.push_back(int(r));
    } catch (const UsageError&) {
      throw bad(item);
    }
    start = comma + 1;
  }
  return ranks;
}

// "2G", "512M", "64K" or bytes (decimal units, as the memory estimate prints them).
double parseSize(const std::string& option, const std::string& text) {
  size_t used = 0;
  double n = -1;
  try {
    n = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const double scale = unit.empty() || unit == "B"   ? 1
                       : unit == "K" || unit == "KB" ? 1e3
                       : unit == "M" || unit == "MB" ? 1e6
                       : unit == "G" || unit == "GB" ? 1e9
                       : unit == "T" || unit == "TB" ? 1e12
                                                     : -1;
  if (used == 0 || scale < 0 || !(n > 0))
    throw UsageError(option + ": \"" + text +
                     "\" is not a size (a positive number, optionally K, M, G or T: 2G, 512M)");
  return n * scale;
}

}  // namespace

// --db's path; an empty one would quietly mean the default store: say so instead.
std::string storePath(const std::string& path) {
  if (path.empty())
    throw UsageError("--db: the path is empty (name the store's file, or leave --db out for " +
                     RunStore::defaultPath() + ")");
  return path;
}

// How many words come before "--"; the words after it are a command (watch), its options its own.
int beforeCommand(int argc, char** argv, std::vector<std::string>& command) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--") {
      command.assign(argv + i + 1, argv + argc);
      return i;
    }
  return argc;
}

CliArgs parseArgs(int argc, char** argv) {
  CliArgs args;
  argc = beforeCommand(argc, argv, args.command);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(a + " needs a value");
      return argv[++i];
    };
    if (a == "--db")
      args.db = storePath(value());
    else if (a == "--csv")
      args.csv = value();
    else if (a == "--trace")
      args.trace = value();
    else if (a == "--text-from")
      args.text_from = value();
    else if (a == "--worker")
      args.worker = value();
    else if (a == "--name")
      args.name = value();
    else if (a == "--json")
      args.json = true;
    else if (a == "--quiet")
      args.quiet = true;
    else if (a == "--verbose")
      args.verbose = true;
    else if (a == "--allow-foreign-store")
      args.allow_foreign_store = true;
    else if (a == "--ignore-memory-estimate")
      args.ignore_memory = true;
    else if (a == "--set")
      args.overrides.push_back(value());
    else if (a == "--ranks")
      args.ranks = parseRanks(value());
    else if (a == "--nproc")
      args.nproc = static_cast<int>(parseCount(a, value(), 1, 4096));
    else if (a == "--steps")
      args.steps = parseCount(a, value(), 1, int64_t{1} << 40);
    else if (a == "--step-range")
      args.step_range = parseStepRange(value());
    else if (a == "--rank-list")
      args.rank_list = parseRankList(value());
    else if (a == "--top")
      args.top = static_cast<int>(parseCount(a, value(), 1, 100000));
    else if (a == "--run")
      args.run_top = static_cast<int>(parseCount(a, value(), 1, 100));
    else if (a == "--calibration")
      args.calibration = value();
    else if (a == "--export")
      args.export_path = value();
    else if (a == "--memory-per-rank")
      args.memory_per_rank = parseSize(a, value());
    else if (a == "--all")
      args.measure_all = true;
    else if (a == "--live")
      args.live = true;
    else if (a == "--rate")  // the job's check names the key and its range
      args.overrides.push_back("simulate.rate=" + value());
    else if (a == "--seconds")
      args.seconds = static_cast<double>(parseCount(a, value(), 1, 86400 * 7));
    else if (a == "--hosts")  // "a:2,b:2"; the job's check names a bad entry
      args.overrides.push_back("launch.hosts=" + hostsArray(value()));
    else if (a == "--hostfile")
      args.overrides.push_back("launch.hostfile=" + nlohmann::json(value()).dump());
    else if (a == "--slurm")  // the job's [launch] keys say the partition, nodes and limit
      args.overrides.push_back("launch.scheduler=\"slurm\"");
    else if (a == "--max-restarts")  // the job's check names the key and its range
      args.overrides.push_back("train.max_restarts=" + value());
    else if (a == "-h" || a == "--help")
      args.positional.insert(args.positional.begin(), "help");
    else if (a == "--version")
      args.positional.insert(args.positional.begin(), "version");
    else if (a.rfind("--", 0) == 0)
      throw UsageError("unknown option " + a);
    else
      args.positional.push_back(a);
  }
  if (args.db.empty()) args.db = RunStore::defaultPath();
  return args;
}

void noMoreThan(const CliArgs& args, size_t count, const std::string& command) {
  if (args.positional.size() > count) {
    throw UsageError(command + ": unexpected argument \"" + args.positional[count] + "\"");
  }
}

const std::string& positional(const CliArgs& args, size_t i, const char* what) {
  if (args.positional.size() <= i) throw UsageError(std::string("missing ") + what);
  return args.positional[i];
}

int64_t runIdAt(const CliArgs& args, size_t i) {
  const std::string& text = positional(args, i, "run ID");
  size_t used = 0;
  int64_t id = 0;
  try {
    id = std::stoll(text, &used);
  } catch (const std::exception&) {
  }
  if (used == 0 || used != text.size() || id <= 0)
    throw UsageError("run ID \"" + text + "\" is not a run id (a positive number)");
  return id;
}

}  // namespace ranklab
