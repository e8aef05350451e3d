// Hostile telemetry against a real run (issue 33, item 5): another local account reads the
// collector's port from `ps` and floods it with garbage over a real ZeroMQ connection. The
// run is unharmed, and the store gets a few counted events, not one per message.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "storage/run_store.h"
#include "tests/integration/cli_runner.h"
#include "tests/support/process_lookup.h"
#include "tests/support/temp_folder.h"

namespace ranklab {
namespace {

TEST(TelemetryFlood, GarbageFromALocalAccountBecomesAFewCountedEvents) {
  testing::TempFolder folder;
  const std::string db = folder.file("runs.db");
  const std::string job = std::string(RANKLAB_SOURCE_DIR) + "/resources/jobs/quickstart.toml";
  const pid_t launcher = testing::startInBackground(
      {"run", job, "--ranks", "2", "--set", "train.epochs=3", "--quiet", "--db", db},
      folder.file("run.log"));
  ASSERT_GT(launcher, 0);
  // What `ps` shows every account: mpirun's --telemetry endpoint.
  std::string endpoint;
  const std::regex telemetry(R"(--telemetry (tcp://127\.0\.0\.1:\d+))");
  for (int i = 0; i < 300 && endpoint.empty(); ++i) {
    for (pid_t pid :
         testing::processesMatching("^[^ ]*mpirun .*ranklab-" + std::to_string(launcher))) {
      std::smatch m;
      const std::string line = testing::commandLineOf(pid);
      if (std::regex_search(line, m, telemetry)) endpoint = m[1];
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(endpoint.empty()) << "no mpirun of this run found";
  constexpr int kFrames = 20000;
  {
    zmq::context_t context;
    zmq::socket_t push(context, zmq::socket_type::push);
    push.set(zmq::sockopt::sndhwm, 0);
    push.set(zmq::sockopt::linger, 5000);
    push.connect(endpoint);
    for (int i = 0; i < kFrames; ++i)
      push.send(zmq::str_buffer("\x01\x02\x03"), zmq::send_flags::none);
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
  EXPECT_NE(said.find("rejected telemetry from 127.0.0.1: undecodable 3 bytes"), std::string::npos)
      << said;
  EXPECT_EQ(store.summary(1)->run.status, "done");
}

}  // namespace
}  // namespace ranklab
