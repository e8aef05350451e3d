#include "app/cli/watch_command.h"

#include "engine/job/job_file.h"

#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace ranklab {

namespace {

constexpr int kMostRanks = 4096;  // parallel.ranks' own limit

std::string fileName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

bool isLauncher(const std::string& program) {
  const std::string name = fileName(program);
  return name == "mpirun" || name == "mpiexec" || name == "srun" || name == "torchrun";
}

// The launched program: a Python interpreter or a script (its own options follow it).
bool isProgram(const std::string& word) {
  const std::string name = fileName(word);
  return name.rfind("python", 0) == 0 || (name.size() > 3 && name.ends_with(".py"));
}

// How many ranks a launcher's own options start: -np N, -n N, --ntasks N, --nproc_per_node N
// (each also as --option=N), times torchrun's --nnodes; read up to the launched program.
std::optional<int> launcherRanks(const std::vector<std::string>& command) {
  static const std::regex joined(
      R"((--np|--ntasks|--nproc_per_node|--nproc-per-node|--nnodes)=(\d+))");
  std::optional<int> ranks;
  int nodes = 1;
  for (size_t i = 1; i < command.size() && !isProgram(command[i]); ++i) {
    std::string option = command[i], value = i + 1 < command.size() ? command[i + 1] : "";
    std::smatch m;
    if (std::regex_match(command[i], m, joined)) option = m[1], value = m[2];
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) continue;
    if (option == "--nnodes")
      nodes = std::stoi(value);
    else if (!ranks &&
             (option == "-np" || option == "-n" || option == "--np" || option == "--ntasks" ||
              option == "--nproc_per_node" || option == "--nproc-per-node"))
      ranks = std::stoi(value);
  }
  if (ranks) *ranks *= nodes;
  return ranks;
}

// "train" for python3 train.py; the program's name otherwise.
std::string defaultName(const std::vector<std::string>& command) {
  for (const std::string& word : command)
    if (word.size() > 3 && word.compare(word.size() - 3, 3, ".py") == 0)
      return std::filesystem::path(word).stem().string();
  return fileName(command.front());
}

}  // namespace

JobSpec watchedJob(const CliArgs& args) {
  if (args.command.empty())
    throw UsageError(
        "watch: no command after \"--\" (ranklab watch --nproc 2 -- python3 train.py)");
  JobSpec job;
  job.launch.command = args.command;
  const bool wraps = isLauncher(args.command.front());
  job.launch.launcher = wraps ? Launcher::kCommand : Launcher::kRanklab;
  const std::optional<int> ranks = args.nproc ? args.nproc
                                   : wraps    ? launcherRanks(args.command)
                                              : std::optional<int>(1);
  if (!ranks)
    throw UsageError("watch: cannot tell how many ranks " + fileName(args.command.front()) +
                     " starts: say it with --nproc N");
  if (*ranks < 1 || *ranks > kMostRanks)
    throw UsageError("watch: " + std::to_string(*ranks) + " ranks: allowed 1.." +
                     std::to_string(kMostRanks));
  job.parallel.ranks = *ranks;
  job.name = args.name.empty() ? defaultName(args.command) : args.name;
  // --set, --max-restarts, --slurm as for `run`, checked as a job file's keys are.
  return parseJob(toTomlText(job), "ranklab watch", args.overrides);
}

}  // namespace ranklab
