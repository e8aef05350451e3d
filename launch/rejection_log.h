// Rejected telemetry as a few events, not one per message (issue 33, item 5): 200,000
// three-byte frames became 150,462 stored events and as many stderr lines. Per peer, the
// first rejection is said at once, then a count at most once a second, and what is left when
// the run ends.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace ranklab {

class RejectionLog {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RejectionLog(Clock::duration interval = std::chrono::seconds(1)) : interval_(interval) {}

  // One rejected message from `peer` ("127.0.0.1", or "" when unknown) and why.
  void add(const std::string& peer, const std::string& reason, Clock::time_point now);
  // The events to record now: a peer's first rejection, and each count due.
  std::vector<std::string> due(Clock::time_point now);
  // The counts not yet said (at the end of a run).
  std::vector<std::string> rest();

 private:
  struct Peer {
    int64_t uncounted = 0;  // rejected since it was last said
    int64_t total = 0;
    std::string first_reason, last_reason;
    Clock::time_point said{};
    bool first_said = false;
  };
  static std::string countText(const std::string& peer, const Peer& p);

  Clock::duration interval_;
  std::map<std::string, Peer> peers_;
};

}  // namespace ranklab
