// Hostile telemetry against a real run (issue 33, items 4 and 5): another local account reads
// the collector's port and the run's wire id from `ps`, then floods it with garbage and forges
// well-formed messages (an evaluation of accuracy 0.999, a step 999999) over real ZeroMQ
// connections. Without the run's CURVE keys nothing gets in; the run is unharmed, and the
// store gets a few counted events, not one per message.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "comm/telemetry/reporter.h"
#include "storage/run_store.h"
#include "tests/integration/cli_runner.h"
#include "tests/support/process_lookup.h"
#include "tests/support/temp_folder.h"

namespace ranklab {
namespace {

using testing::sourceDir;

// The quickstart job on 2 ranks for `epochs` epochs, started in the background with its rows
// in `db` and its output in the folder's run.log: the launcher's pid.
pid_t startQuickstart(const testing::TempFolder& folder, const std::string& db, int epochs) {
  const std::string job = sourceDir() + "/resources/jobs/quickstart.toml";
  return testing::startInBackground(
      {"run", job, "--ranks", "2", "--set", "train.epochs=" + std::to_string(epochs), "--quiet",
       "--db", db},
      folder.file("run.log"));
}

TEST(TelemetryFlood, GarbageFromALocalAccountBecomesAFewCountedEvents) {
  testing::TempFolder folder;
  const std::string db = folder.file("runs.db");
  const pid_t launcher = startQuickstart(folder, db, 3);
  ASSERT_GT(launcher, 0);
  // What `ps` shows every account: mpirun's --telemetry endpoint and --run-id.
  std::string endpoint, wire_id;
  const std::regex telemetry(R"(--run-id (\S+) --telemetry (tcp://127\.0\.0\.1:\d+))");
  for (int i = 0; i < 300 && endpoint.empty(); ++i) {
    for (pid_t pid :
         testing::processesMatching("^[^ ]*mpirun .*ranklab-" + std::to_string(launcher))) {
      std::smatch m;
      const std::string line = testing::commandLineOf(pid);
      if (std::regex_search(line, m, telemetry)) {
        wire_id = m[1];
        endpoint = m[2];
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(endpoint.empty()) << "no mpirun of this run found";
  {  // forged, well-formed: rank 0 of this run, a perfect evaluation and a far step
    ReporterOptions forged;
    forged.endpoint = endpoint;
    forged.run_id = wire_id;
    forged.rank = 0;
    forged.close_timeout_ms = 2000;
    Reporter forger(forged);
    telemetry::Eval eval;
    eval.set_step(999999);
    eval.set_epoch(1);
    eval.set_test_accuracy(0.999);
    eval.set_test_loss(0.001);
    for (int i = 0; i < 50; ++i) forger.eval(eval);
    forger.event("error", "\x1b[31mforged\x1b[0m", 999999);
    forger.flush();
  }
  constexpr int kFrames = 20000;
  {
    zmq::context_t context;
    zmq::socket_t push(context, zmq::socket_type::push);
    push.set(zmq::sockopt::sndhwm, 0);
    push.set(zmq::sockopt::linger, 2000);
    // A run that ended first leaves the socket no pipe, and a PUSH send then blocks for
    // good (1 in ~25 runs here, the test hung until CTest's timeout): give up instead.
    push.set(zmq::sockopt::sndtimeo, 2000);
    push.connect(endpoint);
    for (int i = 0; i < kFrames; ++i)
      if (!push.send(zmq::str_buffer("\x01\x02\x03"), zmq::send_flags::none)) break;
  }
  int status = 0;
  waitpid(launcher, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the flood must not fail the run";
  RunStore store(db);
  int rejections = 0;
  std::string said;
  for (const auto& e : store.events(1)) {
    if (e.text.rfind("rejected telemetry", 0) != 0) continue;
    ++rejections;
    said += e.text + "\n";
  }
  EXPECT_GE(rejections, 1) << "the flood was noticed";
  EXPECT_LE(rejections, 20) << said;
  EXPECT_NE(said.find("rejected telemetry: a connection without this run's CURVE keys was "
                      "dropped at the handshake"),
            std::string::npos)
      << said;
  for (const auto& e : store.evals(1)) {
    EXPECT_LT(e.step, 999999) << "a forged evaluation was stored";
    EXPECT_LT(e.test_accuracy, 0.99) << "a forged evaluation was stored";
  }
  for (const auto& e : store.events(1)) EXPECT_EQ(e.text.find("forged"), std::string::npos);
  for (const auto& r : store.ranks(1)) EXPECT_EQ(r.seq_gaps, 0) << "no false losses";
  EXPECT_EQ(store.summary(1)->run.status, "done");
}

// The TCP sockets a process listens on, as "address:port" in /proc's hex ("0100007F:9C40").
std::vector<std::string> listeningSockets(pid_t pid) {
  std::set<std::string> inodes;
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  std::error_code error;
  for (const auto& fd : std::filesystem::directory_iterator(fds, error)) {
    const std::string target = std::filesystem::read_symlink(fd.path(), error).string();
    if (target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
  }
  std::vector<std::string> listening;
  for (const char* table : {"tcp", "tcp6"}) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/net/" + table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      words >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      if (state == "0A" && inodes.count(inode)) listening.push_back(local);  // 0A: LISTEN
    }
  }
  return listening;
}

// A one-host run keeps Open MPI off the network (issue 33, item 10): its ranks talk over
// shared memory and listen on no TCP port at all (before: 0.0.0.0 and [::], ports 1024+).
TEST(OneHostRun, NoRankListensOnAnyTcpPort) {
  testing::TempFolder folder;
  const std::string db = folder.file("runs.db");
  const pid_t launcher = startQuickstart(folder, db, 2);
  ASSERT_GT(launcher, 0);
  std::vector<pid_t> ranks;
  for (int i = 0; i < 600 && ranks.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ranks.clear();
    for (pid_t mpirun :
         testing::processesMatching("^[^ ]*mpirun .*ranklab-" + std::to_string(launcher)))
      for (pid_t rank : testing::processesMatching("^[^ ]*ranklab-worker "))
        if (testing::parentOf(rank) == mpirun) ranks.push_back(rank);
  }
  ASSERT_EQ(ranks.size(), 2u) << "the run's two ranks were not found";
  // Past MPI_Init: the ranks have stored steps, so every transport is up.
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    try {
      if (!RunStore(db).steps(1).empty()) break;
    } catch (const StoreError&) {
    }
  }
  for (pid_t rank : ranks) {
    const auto listening = listeningSockets(rank);
    EXPECT_TRUE(listening.empty())
        << "rank pid " << rank << " listens on " << ::testing::PrintToString(listening);
  }
  int status = 0;
  waitpid(launcher, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace ranklab
