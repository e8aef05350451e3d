// The Python package's Reporter (python/ranklab/telemetry.py) speaks the engine's wire: a
// real python3 process sends through CURVE with the run's keys from its environment, and the
// real Collector takes every envelope in order, none refused, none lost.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/telemetry/collector.h"
#include "tests/support/shell_quoted.h"

namespace ranklab {
namespace {

using Clock = std::chrono::steady_clock;
using testing::shellQuoted;

// What a rank of a PyTorch job sends: hello, a step, a span, a heartbeat, bye; then it says
// whether the keys were taken out of its environment, and what close() left unsent.
constexpr char kScript[] = R"(
import os
from ranklab import telemetry, telemetry_pb2
r = telemetry.reporter_from_environment(1)
r.hello(2)
s = telemetry_pb2.Step(step=1, samples=64, loss=0.5, bytes_raw=4096)
s.phases.forward_ns = 5000
r.step(s)
r.span(telemetry_pb2.Span(phase="bucket", step=1, part=0, start_ns=10, end_ns=20, bytes=4096))
r.heartbeat()
r.bye(0, 123)
print("keys left in the environment:", telemetry.KEYS_VARIABLE in os.environ)
print("unsent:", r.close())
)";

// A collector of run "py-run" (2 ranks) on a free local port, and the run's CURVE keys.
class PythonReporter : public ::testing::Test {
 protected:
  std::vector<telemetry::Envelope> runScript(const char* script, std::string& out);

  const RunCurveKeys keys_ = newRunCurveKeys();
  Collector collector_{"py-run", 2, "tcp://127.0.0.1:*", keys_.collector};
};

// What a python3 process running `script` sent to the collector, through CURVE with the
// run's keys from its environment, and what it printed; its exit status is expected to be 0.
std::vector<telemetry::Envelope> PythonReporter::runScript(const char* script, std::string& out) {
  // Z85 keys hold shell characters ("&", "(", "<"): quoted, as the launcher's exec needs not.
  const std::string command =
      "PYTHONPATH=" RANKLAB_PYTHON_DIR " RANKLAB_TELEMETRY_ENDPOINT=" + collector_.endpoint() +
      " RANKLAB_RUN_ID=py-run " + "RANKLAB_TELEMETRY_KEYS=" + shellQuoted(keysText(keys_.ranks)) +
      " /usr/bin/python3 -c " + shellQuoted(script) + " 2>&1";
  FILE* child = popen(command.c_str(), "r");
  EXPECT_NE(child, nullptr);
  if (!child) return {};
  // The handshake is answered inside receive(): poll while the script runs, until its bye.
  std::vector<telemetry::Envelope> arrived;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline && (arrived.empty() || !arrived.back().has_bye()))
    for (auto& e : collector_.receive(50)) arrived.push_back(std::move(e));
  char buffer[256];
  while (fgets(buffer, sizeof buffer, child)) out += buffer;
  EXPECT_EQ(pclose(child), 0) << out;
  return arrived;
}

TEST_F(PythonReporter, ItsEnvelopesReachTheCollectorThroughCurve) {
  std::string out;
  const std::vector<telemetry::Envelope> arrived = runScript(kScript, out);
  EXPECT_NE(out.find("keys left in the environment: False"), std::string::npos) << out;
  EXPECT_NE(out.find("unsent: 0"), std::string::npos) << out;
  EXPECT_TRUE(collector_.takeRejected().empty());
  EXPECT_EQ(collector_.gaps(1), 0);

  ASSERT_EQ(arrived.size(), 5u) << out;
  for (size_t i = 0; i < arrived.size(); ++i) {
    EXPECT_EQ(arrived[i].rank(), 1);
    EXPECT_EQ(arrived[i].seq(), i);
  }
  EXPECT_EQ(arrived[0].hello().world(), 2);
  EXPECT_EQ(arrived[1].step().phases().forward_ns(), 5000);
  EXPECT_EQ(arrived[1].step().bytes_raw(), 4096);
  EXPECT_EQ(arrived[2].span().phase(), "bucket");
  EXPECT_TRUE(arrived[2].span().has_part());
  EXPECT_TRUE(arrived[3].has_heartbeat());
  EXPECT_EQ(arrived[4].bye().train_ns(), 123);
  EXPECT_LE(arrived[0].time_ns(), arrived[4].time_ns());
}

// Steps that come fast wait for their batch (up to 20 ms, as the engine's); the heartbeat
// thread sends them though no step follows, long before close() would.
constexpr char kBatchScript[] = R"(
import time
from ranklab import telemetry, telemetry_pb2
r = telemetry.reporter_from_environment(1)
beats = telemetry.Heartbeats(r, 60.0)
r.hello(2)
for step in range(1, 9):
    r.step(telemetry_pb2.Step(step=step, samples=64))
print("the fast steps wait:", len(r._spool) >= 7)
time.sleep(0.5)
print("waiting after half a second:", len(r._spool))
beats.stop()
r.bye(0, 1)
r.close()
)";

TEST_F(PythonReporter, FastStepsLeaveInBatchesThatTheHeartbeatThreadSends) {
  std::string out;
  const std::vector<telemetry::Envelope> arrived = runScript(kBatchScript, out);
  // Seven steps came fast after the first (the hello, too, waits while the handshake runs).
  EXPECT_NE(out.find("the fast steps wait: True"), std::string::npos) << out;
  EXPECT_NE(out.find("waiting after half a second: 0"), std::string::npos) << out;
  ASSERT_EQ(arrived.size(), 10u) << out;
  for (size_t i = 0; i < arrived.size(); ++i) EXPECT_EQ(arrived[i].seq(), i);
  for (size_t i = 1; i <= 8; ++i) EXPECT_EQ(arrived[i].step().step(), int64_t(i));
  EXPECT_EQ(collector_.gaps(1), 0);
}

}  // namespace
}  // namespace ranklab
