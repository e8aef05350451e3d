// Telemetry across hosts is encrypted (CURVE) and admits only the run's own client key: a
// client with another key, or none, gets nothing in, and the run's ranks are unharmed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "comm/telemetry/collector.h"
#include "comm/telemetry/reporter.h"

namespace ranklab {
namespace {

using Clock = std::chrono::steady_clock;
using ::testing::HasSubstr;

ReporterOptions options(const std::string& endpoint, int rank, std::optional<RankCurveKeys> curve) {
  ReporterOptions o;
  o.endpoint = endpoint;
  o.run_id = "curve-run";
  o.rank = rank;
  o.curve = std::move(curve);
  o.close_timeout_ms = 100;  // the refused ones never drain their spool
  return o;
}

// What arrives within `seconds`, by rank, and every refusal the collector listed.
struct Arrived {
  std::vector<int> ranks;
  std::vector<std::string> refusals;
};
// `flush` runs between polls: a reporter sends what it spooled before the handshake ended
// only on its next call, as a rank's heartbeats do every second.
Arrived collectFor(Collector& collector, double seconds, const std::function<void()>& flush) {
  Arrived arrived;
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    flush();
    for (const auto& envelope : collector.receive(50)) arrived.ranks.push_back(envelope.rank());
    for (const auto& r : collector.takeRejected()) arrived.refusals.push_back(r.reason);
  }
  return arrived;
}

TEST(TelemetryCurve, KeysTravelAsOneTextAndBack) {
  const RunCurveKeys keys = newRunCurveKeys();
  EXPECT_EQ(keys.ranks.client.public_key.size(), 40u);
  const RankCurveKeys back = parseKeysText(keysText(keys.ranks));
  EXPECT_EQ(back.server_public, keys.collector.server.public_key);
  EXPECT_EQ(back.client.secret_key, keys.ranks.client.secret_key);
  EXPECT_THROW(parseKeysText("short"), std::runtime_error);
}

TEST(TelemetryCurve, OnlyTheRunsKeyGetsIn) {
  const RunCurveKeys keys = newRunCurveKeys();
  Collector collector("curve-run", 4, "tcp://127.0.0.1:*", keys.collector);

  RankCurveKeys wrong = keys.ranks;  // knows the server's key, has a client key of its own
  wrong.client = newCurveKeyPair();
  Reporter intruder(options(collector.endpoint(), 1, wrong));
  Reporter plain(options(collector.endpoint(), 2, std::nullopt));  // no encryption at all
  Reporter rank(options(collector.endpoint(), 0, keys.ranks));
  for (int i = 0; i < 20; ++i) {
    intruder.heartbeat();
    plain.heartbeat();
    rank.heartbeat();
  }
  const auto flush = [&] {
    intruder.flush();
    plain.flush();
    rank.flush();
  };
  const Arrived arrived = collectFor(collector, 3.0, flush);
  EXPECT_EQ(std::count(arrived.ranks.begin(), arrived.ranks.end(), 0), 20) << "the run's rank";
  EXPECT_EQ(arrived.ranks.size(), 20u) << "nothing from the other key or the plain client";
  // The other key reaches ZAP, retrying all along: listed once by its address, not per try.
  // The plain client fails the handshake before ZAP: each try counted (the launcher's
  // RejectionLog turns the counts into an event a second at most).
  const auto said = [&](const char* text) {
    return std::count_if(arrived.refusals.begin(), arrived.refusals.end(),
                         [&](const std::string& r) { return r.find(text) != std::string::npos; });
  };
  EXPECT_EQ(said("from 127.0.0.1 without this run's CURVE key was refused"), 1);
  EXPECT_GE(said("without this run's CURVE keys was dropped at the handshake"), 1);
  EXPECT_EQ(said("refused") + said("dropped"), static_cast<long>(arrived.refusals.size()));

  for (int i = 0; i < 5; ++i) rank.heartbeat();  // unharmed by the refusals
  EXPECT_EQ(collectFor(collector, 1.0, flush).ranks.size(), 5u);
}

}  // namespace
}  // namespace ranklab
