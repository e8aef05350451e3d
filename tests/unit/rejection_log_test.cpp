// Rejected telemetry as a few events per sender, not one per message (issue 33, item 5).
#include "launch/rejection_log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ranklab {
namespace {

using std::chrono::milliseconds;

TEST(RejectionLog, AFloodBecomesTheFirstRejectionThenACountASecond) {
  RejectionLog log;
  const auto start = RejectionLog::Clock::now();
  log.add("127.0.0.1", "undecodable 3 bytes", start);
  auto now = start;
  std::vector<std::string> events = log.due(now);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0],
            "rejected telemetry from 127.0.0.1: undecodable 3 bytes (further rejections are "
            "counted, at most one event a second)");
  for (int i = 0; i < 200'000; ++i) {
    now = start + milliseconds(i / 100);  // 200,000 over two seconds
    log.add("127.0.0.1", i % 2 ? "undecodable 3 bytes" : "no body (seq 0)", now);
    for (const std::string& text : log.due(now)) events.push_back(text);
  }
  log.add("10.0.0.9", "rank 9 outside world 2", now);
  for (const std::string& text : log.due(now)) events.push_back(text);
  for (const std::string& text : log.rest()) events.push_back(text);
  ASSERT_EQ(events.size(), 4u) << "first, one count a second, the other peer, the rest";
  EXPECT_EQ(events[1].rfind("rejected telemetry from 127.0.0.1: ", 0), 0u) << events[1];
  EXPECT_EQ(events[2].rfind("rejected telemetry from 10.0.0.9: rank 9 outside world 2", 0), 0u);
  EXPECT_NE(events[3].find("200001 in all (the last: undecodable 3 bytes)"), std::string::npos)
      << events[3];
  EXPECT_TRUE(log.rest().empty()) << "said once";
}

}  // namespace
}  // namespace ranklab
