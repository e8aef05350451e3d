#include "launch/rejection_log.h"

namespace ranklab {

namespace {

std::string from(const std::string& peer) {
  return peer.empty() ? "" : " from " + peer;
}

}  // namespace

void RejectionLog::add(const std::string& peer, const std::string& reason, Clock::time_point now) {
  Peer& p = peers_[peer];
  ++p.uncounted;
  if (++p.total == 1) p.first_reason = reason;
  p.last_reason = reason;
  if (!p.first_said) p.said = now - interval_;  // the first is due at once
}

std::string RejectionLog::countText(const std::string& peer, const Peer& p) {
  return "rejected telemetry" + from(peer) + ": " + std::to_string(p.uncounted) +
         " more message(s), " + std::to_string(p.total) + " in all (the last: " + p.last_reason +
         ")";
}

std::vector<std::string> RejectionLog::due(Clock::time_point now) {
  std::vector<std::string> events;
  for (auto& [peer, p] : peers_) {
    if (p.uncounted == 0 || now - p.said < interval_) continue;
    if (!p.first_said) {
      events.push_back("rejected telemetry" + from(peer) + ": " + p.first_reason +
                       " (further rejections are counted, at most one event a second)");
      p.first_said = true;
      p.uncounted -= 1;
      if (p.uncounted > 0) events.push_back(countText(peer, p));
    } else {
      events.push_back(countText(peer, p));
    }
    p.uncounted = 0;
    p.said = now;
  }
  return events;
}

std::vector<std::string> RejectionLog::rest() {
  std::vector<std::string> events;
  for (auto& [peer, p] : peers_) {
    if (p.uncounted == 0) continue;
    events.push_back(countText(peer, p));
    p.uncounted = 0;
  }
  return events;
}

}  // namespace ranklab
