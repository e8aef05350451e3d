// A command's ranks (launch/command_ranks.h, app/cli/watch_command.h): the command lines each
// launcher runs, what a rank is told, the hint when ranks say nothing, and the job `watch` builds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "app/cli/watch_command.h"
#include "launch/command_ranks.h"

namespace ranklab {
namespace {

using ::testing::HasSubstr;

JobSpec commandJob(const std::string& launcher) {
  JobSpec job;
  job.parallel.ranks = 3;
  job.launch.command = {"python3", "train.py"};
  job.launch.launcher = choiceFrom<Launcher>(launcher);
  return job;
}

bool has(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

TEST(CommandRanks, EachLauncherRunsTheCommandItsWay) {
  EXPECT_EQ(commandLine(commandJob("ranklab"), "mpirun", {}, "/jobs", ""),
            (std::vector<std::string>{"python3", "train.py"}));
  EXPECT_EQ(commandLine(commandJob("command"), "mpirun", {}, "/jobs", ""),
            (std::vector<std::string>{"python3", "train.py"}));
  const auto torchrun = commandLine(commandJob("torchrun"), "mpirun", {}, "", "");
  EXPECT_EQ(std::vector<std::string>(torchrun.begin(), torchrun.begin() + 4),
            (std::vector<std::string>{"torchrun", "--nproc_per_node", "3", "--no_python"}));
  const auto mpirun =
      commandLine(commandJob("mpirun"), "/usr/bin/mpirun", {}, "/jobs", "/b/python");
  EXPECT_EQ(mpirun.front(), "/usr/bin/mpirun");
  EXPECT_TRUE(has(mpirun, "-wdir") && has(mpirun, "/jobs"));
  EXPECT_TRUE(has(mpirun, "RANKLAB_TELEMETRY_ENDPOINT") && has(mpirun, "PYTHONPATH"));
  EXPECT_TRUE(has(mpirun, "3"));
  // Each rank's contract from Open MPI's variables, then the command itself.
  EXPECT_TRUE(std::any_of(mpirun.begin(), mpirun.end(), [](const std::string& w) {
    return w.find("RANK=$OMPI_COMM_WORLD_RANK") != std::string::npos;
  }));
  EXPECT_EQ(std::vector<std::string>(mpirun.end() - 2, mpirun.end()),
            (std::vector<std::string>{"python3", "train.py"}));
}

TEST(CommandRanks, ARankIsToldTorchrunsContractAndTheRunNeverOnItsCommandLine) {
  const auto env = commandEnvironment(commandJob("ranklab"),
                                      {"tcp://127.0.0.1:4000", "7-ab", 250, 5}, "/b/python");
  for (const char* expected :
       {"WORLD_SIZE=3", "LOCAL_WORLD_SIZE=3", "MASTER_ADDR=127.0.0.1",
        "RANKLAB_TELEMETRY_ENDPOINT=tcp://127.0.0.1:4000", "RANKLAB_RUN_ID=7-ab",
        "RANKLAB_HEARTBEAT_MS=250", "RANKLAB_SPAN_EVERY=5"})
    EXPECT_TRUE(has(env, expected)) << expected;
  EXPECT_TRUE(std::any_of(env.begin(), env.end(), [](const std::string& e) {
    return e.rfind("PYTHONPATH=/b/python", 0) == 0;
  }));
  EXPECT_TRUE(std::any_of(env.begin(), env.end(), [](const std::string& e) {
    return e.rfind("MASTER_PORT=", 0) == 0 && std::stoi(e.substr(12)) > 0;
  }));
}

TEST(CommandRanks, RanksThatSaidNothingGetAHint) {
  EXPECT_EQ(commandHint({}, {}), "");
  EXPECT_THAT(commandHint({"rank 0: ModuleNotFoundError: No module named 'ranklab'"}, {0, 1}),
              HasSubstr("cannot import ranklab's Python package"));
  EXPECT_THAT(commandHint({}, {0, 1}), HasSubstr("ranks 0, 1 never reported"));
  EXPECT_THAT(commandHint({}, {4}), HasSubstr("rank 4 never reported"));
  std::vector<int> many(40);
  for (int r = 0; r < 40; ++r) many[r] = r;
  EXPECT_THAT(commandHint({}, many), HasSubstr("15 and 24 more"));
}

TEST(CommandRanks, AMissingProgramIsNamed) {
  EXPECT_NO_THROW(requireProgram("sh"));
  try {
    requireProgram("no-such-trainer-42");
    FAIL() << "no throw";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no-such-trainer-42: command not found"));
  }
  EXPECT_THROW(requireProgram("/nonexistent/python3"), std::runtime_error);
}

CliArgs watchArgs(std::vector<std::string> command, std::optional<int> nproc = std::nullopt) {
  CliArgs args;
  args.command = std::move(command);
  args.nproc = nproc;
  return args;
}

TEST(WatchCommand, AScriptRunsAsNprocLocalRanksNamedAfterIt) {
  const JobSpec job = watchedJob(watchArgs({"python3", "dir/train.py", "--epochs", "2"}, 4));
  EXPECT_EQ(job.parallel.ranks, 4);
  EXPECT_EQ(job.launch.launcher, Launcher::kRanklab);
  EXPECT_EQ(job.name, "train");
  EXPECT_EQ(watchedJob(watchArgs({"./trainer"})).parallel.ranks, 1);
  CliArgs hang = watchArgs({"python3", "t.py"});
  hang.overrides = {"telemetry.hang_limit_s=30"};
  EXPECT_EQ(watchedJob(hang).telemetry.hang_limit_s, 30);
}

TEST(WatchCommand, ALauncherIsWrappedWithTheRanksItsOptionsSay) {
  EXPECT_EQ(
      watchedJob(watchArgs({"mpirun", "-np", "4", "python3", "t.py", "-n", "9"})).parallel.ranks,
      4);
  EXPECT_EQ(watchedJob(watchArgs({"srun", "--ntasks=3", "python3", "t.py"})).parallel.ranks, 3);
  const JobSpec torchrun =
      watchedJob(watchArgs({"torchrun", "--nnodes", "2", "--nproc_per_node=2", "t.py"}));
  EXPECT_EQ(torchrun.parallel.ranks, 4);
  EXPECT_EQ(torchrun.launch.launcher, Launcher::kCommand);
  EXPECT_EQ(watchedJob(watchArgs({"mpirun", "python3", "t.py"}, 6)).parallel.ranks, 6);
  EXPECT_THROW(watchedJob(watchArgs({"mpirun", "python3", "t.py"})), UsageError);
  EXPECT_THROW(watchedJob(watchArgs({})), UsageError);
}

}  // namespace
}  // namespace ranklab
