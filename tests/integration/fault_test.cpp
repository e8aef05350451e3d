// Injected faults ([[faults]]) on 4 real mpirun ranks: a killed, exited or stopped rank is
// named with its last step and its cause (signal, exit code, process state) in the run's
// error and its `failure` event, within the detection goals (dead: the CLI is back within
// 2 s of the fault; hung: telemetry.hang_limit_s), with no rank process or MPI shared
// memory left behind and every step record received before the fault kept.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/types.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "storage/run_store.h"
#include "tests/integration/cli_runner.h"
#include "tests/support/process_lookup.h"

namespace {

using Clock = std::chrono::steady_clock;
using ranklab::testing::runCli;

class Faults : public ranklab::testing::CliTest {
 protected:
  // A 4-rank run of 400 steps with one fault on rank 2 after step 20.
  std::string jobWith(const std::string& fault, const std::string& extra = "") {
    const std::string path = folder_.file("job.toml");
    std::ofstream(path) << "name = \"fault\"\n[data]\ndataset = \"fashion-mnist\"\n"
                           "train_limit = 12800\ntest_limit = 1000\n[model]\nlayers = [64]\n"
                           "[train]\nepochs = 1\nbatch_size = 32\n[parallel]\nranks = 4\n"
                        << extra << "[[faults]]\nrank = 2\nat_step = 20\n"
                        << fault << "\n";
    return path;
  }

  // Runs the job; the seconds from the start of the CLI to its end.
  double run(const std::string& job, ranklab::testing::CliResult& result) {
    const auto start = Clock::now();
    result = runCli("run " + job + " --quiet --db " + db());
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  // The failure the launcher stored, and what was kept of the ranks' records.
  void expectFailure(const std::string& error_pattern) {
    ranklab::RunStore store(db());
    const auto summary = store.summary(1);
    ASSERT_TRUE(summary);
    EXPECT_EQ(summary->run.status, "failed");
    bool found = false;
    for (const auto& e : store.events(1)) {
      if (e.kind == "failure") {
        found = true;
        EXPECT_TRUE(std::regex_search(e.text, std::regex(error_pattern))) << e.text;
      }
    }
    EXPECT_TRUE(found) << "no failure event";
    // Every rank reported steps 1..20 before the fault (and then waited in step 21's
    // all-reduce until it was ended): none of them is lost.
    int64_t rows[4] = {};
    for (const auto& s : store.steps(1)) ++rows[s.rank];
    for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(rows[rank], 20) << "rank " << rank;
  }

  // Nothing of this run is left: no rank of its job file, no segment folder of its launcher.
  // (Only this run's: CTest runs other tests' ranks beside it.)
  static void expectNothingLeft(const std::string& cli_output) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(cli_output, m,
                                  std::regex(R"(--job (\S*ranklab-(\d+)-\w{6}/job-\d+\.toml))")))
        << cli_output;
    EXPECT_TRUE(ranklab::testing::processesMatching("ranklab-worker --job " + m[1].str()).empty())
        << "a rank process outlived its run";
    const std::string segments = "ranklab-" + m[2].str() + "-";
    for (const auto& entry : std::filesystem::directory_iterator("/dev/shm"))
      EXPECT_NE(entry.path().filename().string().rfind(segments, 0), 0u) << entry.path();
  }
};

TEST_F(Faults, AKilledRankIsNamedWithItsSignalAndLastStep) {
  ranklab::testing::CliResult r;
  const double seconds = run(jobWith("action = \"kill\""), r);
  EXPECT_NE(r.exit_code, 0) << r.out;
  const std::string named = R"(rank 2 died after step 20 \(signal 9 \(Killed\)\), found [0-9.]+ s)";
  EXPECT_TRUE(std::regex_search(r.out, std::regex(named))) << r.out;
  expectFailure(named);
  expectNothingLeft(r.out);
  std::printf("kill: the whole run took %.2f s\n", seconds);
}

TEST_F(Faults, AnExitedRankIsNamedWithItsExitCode) {
  ranklab::testing::CliResult r;
  run(jobWith("action = \"exit\""), r);
  const std::string named = R"(rank 2 died after step 20 \(exit code 3\))";
  EXPECT_TRUE(std::regex_search(r.out, std::regex(named))) << r.out;
  expectFailure(named);
  expectNothingLeft(r.out);
}

// SIGSTOP: the others keep beating while they wait in the all-reduce; rank 2 does not.
TEST_F(Faults, AStoppedRankIsToldApartFromTheWaitingOnesAsHung) {
  ranklab::testing::CliResult r;
  run(jobWith("action = \"stop\"", "[telemetry]\nhang_limit_s = 3\n"), r);
  const std::string named =
      R"(rank 2 hung after step 20: no message, not even a heartbeat, for [3-9]\.[0-9]+ s )"
      R"(\(telemetry.hang_limit_s = 3\); its process is stopped \(SIGSTOP\))";
  EXPECT_TRUE(std::regex_search(r.out, std::regex(named))) << r.out;
  expectFailure(named);
  expectNothingLeft(r.out);
}

// A stop that ends before the hang limit is only a stall: the run finishes.
TEST_F(Faults, AShortStopAndASlowRankLetTheRunFinish) {
  ranklab::testing::CliResult r;
  run(jobWith("action = \"stop\"\nseconds = 1\n[[faults]]\nrank = 1\nat_step = 5\n"
              "action = \"slow\"\nms = 5",
              "[telemetry]\nhang_limit_s = 5\n"),
      r);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  ranklab::RunStore store(db());
  int faults = 0;
  for (const auto& e : store.events(1)) faults += e.kind == "fault";
  EXPECT_EQ(faults, 3) << "stop, its continuation, slow";
  expectNothingLeft(r.out);
}

// Steps stored so far in the run store at `db` (0 before the launcher made its tables).
int64_t storedSteps(const std::string& db) {
  sqlite3* handle = nullptr;
  int64_t steps = 0;
  if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* count = nullptr;
    if (sqlite3_prepare_v2(handle, "SELECT count(*) FROM steps", -1, &count, nullptr) ==
            SQLITE_OK &&
        sqlite3_step(count) == SQLITE_ROW)
      steps = sqlite3_column_int64(count, 0);
    sqlite3_finalize(count);
  }
  sqlite3_close(handle);
  return steps;
}

// The launcher's own stall (here: its store's write lock held elsewhere for 3 s, 3x the
// hang limit) leaves the ranks' heartbeats unread in its socket; they are read before any
// rank is judged hung, so the run finishes, and an event says the store was slow.
TEST_F(Faults, ALauncherThatStalledReadsTheHeartbeatsWaitingBeforeJudging) {
  const std::string job = folder_.file("stall.toml");
  std::ofstream(job) << "name = \"stall\"\n[data]\ndataset = \"fashion-mnist\"\n"
                        "train_limit = 6400\ntest_limit = 500\n[model]\nlayers = [32]\n"
                        "[train]\nepochs = 1\nbatch_size = 16\n[parallel]\nranks = 2\n"
                        "[telemetry]\nhang_limit_s = 1\nheartbeat_ms = 100\n"
                        "[[faults]]\nrank = 1\nat_step = 1\naction = \"slow\"\nms = 25\n";
  ranklab::testing::CliResult r;
  std::thread launcher([&] { run(job, r); });
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (storedSteps(db()) == 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  sqlite3* lock = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &lock), SQLITE_OK);
  sqlite3_busy_timeout(lock, 5000);
  ASSERT_EQ(sqlite3_exec(lock, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(sqlite3_exec(lock, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(lock);
  launcher.join();
  EXPECT_EQ(r.exit_code, 0) << r.out;
  ranklab::RunStore store(db());
  const auto summary = store.summary(1);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->run.status, "done") << r.out;
  EXPECT_EQ(store.steps(1).size(), 2u * 200u) << "200 steps a rank, none lost";
  bool store_said = false, launcher_said = false;  // the stall is told apart from the ranks'
  for (const auto& e : store.events(1)) {
    store_said = store_said || e.text.find("the run store took") != std::string::npos;
    launcher_said = launcher_said || e.text.find("the launcher was held up") != std::string::npos;
  }
  EXPECT_TRUE(store_said) << "no event says the store was slow";
  EXPECT_TRUE(launcher_said) << "no event says the launcher was held up";
}

}  // namespace
