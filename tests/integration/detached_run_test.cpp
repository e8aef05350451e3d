// A run in a launcher process of its own: started detached, driven by signals and followed
// from the store, as the workbench does it, with the real `ranklab` CLI and real ranks.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "launch/detached_run.h"
#include "launch/run_follower.h"
#include "tests/integration/cli_runner.h"

namespace ranklab {
namespace {

using testing::cliPath;
using testing::CliTest;

std::string readFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Field `n` (1-based, after the command name) of /proc/PID/stat; -1 when the process is gone.
long statField(int64_t pid, int n) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(file, text)) return -1;
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string value;
  for (int i = 3; i <= n; ++i) fields >> value;
  return std::stol(value);
}

// What a follower reports, kept for the checks.
struct Recorded : RunObserver {
  int64_t started = 0;
  std::map<int, int64_t> steps;
  std::vector<std::string> lines;
  bool finished = false;
  void onStarted(int64_t id, const std::vector<std::string>&) override { started = id; }
  void onStep(const StepRow& s) override { ++steps[s.rank]; }
  void onOutput(int, bool, const std::string& line) override { lines.push_back(line); }
  void onFinished(const RunSummary&) override { finished = true; }
};

RunOutcome followToTheEnd(RunFollower& follower, RunObserver& observer) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  while (follower.poll(observer) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return follower.outcome();
}

TEST(DetachedRun, TheProcessIsNotTheCallersChildAndWritesItsConsoleToTheFile) {
  testing::TempFolder folder;
  const std::string console = folder.file("console.log");
  const int64_t pid = startDetached({"/bin/sh", "-c", "echo started; sleep 0.3"}, console);
  EXPECT_NE(statField(pid, 4), getpid());   // ppid: init's (or a subreaper's), not ours
  EXPECT_NE(statField(pid, 6), getsid(0));  // a session of its own: no hang-up from ours
  for (int i = 0; i < 100 && statField(pid, 4) >= 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(readFile(console), "started\n");
}

TEST(DetachedRun, AProgramThatCannotStartIsNamed) {
  testing::TempFolder folder;
  try {
    startDetached({"/nonexistent/ranklab"}, folder.file("console.log"));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/ranklab"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }
}

TEST(DetachedRun, ARankFaultTravelsInASignalsValue) {
  std::vector<std::pair<int, std::string>> got;
  {
    RankFaultListener listener(
        [&got](int rank, const std::string& action) { got.emplace_back(rank, action); });
    EXPECT_TRUE(sendRankFault(getpid(), 2, "stop"));
    EXPECT_TRUE(sendRankFault(getpid(), 13, "continue"));
    EXPECT_TRUE(sendRankFault(getpid(), 0, "kill"));
    EXPECT_TRUE(sendRankFault(getpid(), 255, "slow"));
    for (int i = 0; i < 100 && got.size() < 4; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::vector<std::pair<int, std::string>> sent = {
      {2, "stop"}, {13, "continue"}, {0, "kill"}, {255, "slow"}};
  EXPECT_EQ(got, sent);
  EXPECT_THROW(sendRankFault(getpid(), 1, "explode"), std::invalid_argument);
  EXPECT_FALSE(rankFaultOf(-1).has_value());
}

// A thread started before the listener still takes the signal: a fault it catches is handed on,
// and the listener's own end reaches its thread alone (sent to the process, it killed a
// launcher on a 16-core GPU machine, whose earlier threads took it).
TEST(DetachedRun, FaultsReachTheListenerWhateverThreadTheSignalLandsOn) {
  std::atomic<bool> done{false};
  std::thread earlier([&done] {
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> got{0};
    {
      RankFaultListener listener([&got](int, const std::string&) { ++got; });
      for (int i = 0; i < 3; ++i) EXPECT_TRUE(sendRankFault(getpid(), i, "slow"));
      for (int i = 0; i < 200 && got < 3; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(got, 3) << "round " << round;
  }
  done = true;
  earlier.join();
}

TEST(DetachedRun, ConsoleLinesSayWhichRankPrintedThem) {
  const ConsoleLine out = parseConsoleLine("  [rank 3] hello [x]");
  EXPECT_EQ(out.rank, 3);
  EXPECT_FALSE(out.is_stderr);
  EXPECT_EQ(out.text, "hello [x]");
  const ConsoleLine err = parseConsoleLine("  [rank 12 err] warning");
  EXPECT_EQ(err.rank, 12);
  EXPECT_TRUE(err.is_stderr);
  EXPECT_EQ(err.text, "warning");
  const ConsoleLine own = parseConsoleLine("run 4 started: mpirun ...");
  EXPECT_EQ(own.rank, -1);
  EXPECT_FALSE(own.is_stderr);  // progress, not trouble
  EXPECT_FALSE(own.echoes_event);
  EXPECT_TRUE(parseConsoleLine("run 4 failed: rank 2 died").is_stderr);
  EXPECT_TRUE(parseConsoleLine("ranklab: runs.db: no run with id 9").is_stderr);
  EXPECT_TRUE(parseConsoleLine("  [failure] rank 2: rank 2 died").echoes_event);
}

class FollowedRun : public CliTest {
 protected:
  // `ranklab run` on the quickstart, detached, with `sets` added; its follower.
  std::unique_ptr<RunFollower> launch(const std::vector<std::string>& sets) {
    std::vector<std::string> argv = {cliPath(), "run", quickstart(), "--db", db(), "--quiet"};
    for (const auto& s : sets) argv.insert(argv.end(), {"--set", s});
    { RunStore created(db()); }  // the store exists before either process opens it
    const int64_t pid = startDetached(argv, folder_.file("console.log"));
    return std::make_unique<RunFollower>(db(), processOnThisHost(pid), folder_.file("console.log"),
                                         argv);
  }
};

// The follower reports every step the launcher stored, and the run's end.
TEST_F(FollowedRun, EveryStoredStepIsReportedOnce) {
  auto follower = launch(
      {"parallel.ranks=2", "data.train_limit=4096", "data.test_limit=512", "train.epochs=1"});
  Recorded seen;
  const RunOutcome outcome = followToTheEnd(*follower, seen);
  ASSERT_EQ(outcome.status, "done") << outcome.error;
  EXPECT_EQ(seen.started, outcome.run_id);
  EXPECT_TRUE(seen.finished);
  RunStore store(db());
  std::map<int, int64_t> stored;
  for (const StepRow& s : store.steps(outcome.run_id)) ++stored[s.rank];
  EXPECT_EQ(seen.steps, stored);
  EXPECT_EQ(stored.size(), 2u);
}

// A job that does not check out: no run, and the launcher's words as the error.
TEST_F(FollowedRun, AJobThatIsRefusedEndsWithTheLaunchersWords) {
  auto follower = launch({"train.lr=-1"});
  Recorded seen;
  const RunOutcome outcome = followToTheEnd(*follower, seen);
  EXPECT_EQ(outcome.status, "failed");
  EXPECT_EQ(outcome.run_id, 0);
  EXPECT_NE(outcome.error.find("train.lr"), std::string::npos) << outcome.error;
  EXPECT_EQ(seen.started, 0);
  EXPECT_TRUE(RunStore(db()).listRuns().empty());
}

// The launcher stops its run on SIGINT and a follower sees it end as stopped.
TEST_F(FollowedRun, AStopRequestEndsTheRunAsStopped) {
  auto follower = launch({"parallel.ranks=2", "data.train_limit=2048", "train.epochs=10000",
                          "model.layers=[32]", "fault.straggler_rank=0",
                          "fault.straggler_delay_ms=1"});  // outlasts the stop on any CPU
  Recorded seen;
  while (follower->poll(seen) && (seen.steps[1] < 50))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(requestStopOf(follower->launcherPid()));
  const RunOutcome outcome = followToTheEnd(*follower, seen);
  EXPECT_EQ(outcome.status, "stopped") << outcome.error;
  EXPECT_TRUE(seen.finished);
}

}  // namespace
}  // namespace ranklab
