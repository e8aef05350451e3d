// Launcher side of telemetry: ZeroMQ PULL bound on loopback, decodes and validates.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "comm/telemetry/curve_keys.h"
#include "comm/telemetry/telemetry.pb.h"

namespace ranklab {

inline constexpr uint32_t kWireVersion = 1;

// A message that failed validation: why, and from whom if known.
struct RejectedMessage {
  int rank = -1;
  std::string reason;
  std::string peer;  // the sender's address ("127.0.0.1"), "" when not known
};

// One message off the wire: the envelope when it decodes and is valid for `run_id` and
// `world`, else why not (a RejectedMessage). Never throws, whatever the bytes.
struct DecodedMessage {
  std::optional<telemetry::Envelope> envelope;
  RejectedMessage rejected;
};
DecodedMessage decodeMessage(const void* bytes, size_t size, const std::string& run_id, int world);

class Collector {
 public:
  // Binds PULL to `bind` (default: an ephemeral port on 127.0.0.1). Accepts messages for
  // `run_id` from ranks 0..world-1 only. With `curve`, only encrypted connections from
  // that client key get in (a ZAP handler, answered inside receive()); others are refused
  // and listed in takeRejected(), as are connections that fail the handshake outright.
  Collector(std::string run_id, int world, const std::string& bind = "tcp://127.0.0.1:*",
            const std::optional<CollectorCurve>& curve = std::nullopt);
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // The endpoint ranks should connect to, e.g. tcp://127.0.0.1:40123.
  const std::string& endpoint() const { return endpoint_; }

  // Waits up to timeout_ms for messages, then returns every valid one already queued
  // (at most max_messages). Invalid ones are counted and described in rejected().
  std::vector<telemetry::Envelope> receive(int timeout_ms, size_t max_messages = 4096);

  // Messages that failed validation since the last call (wrong version, run id, rank,
  // undecodable bytes, missing body), emptied by the call.
  std::vector<RejectedMessage> takeRejected();

  // Per-rank sequence holes seen so far (messages lost between rank and collector).
  int64_t gaps(int rank) const;
  // A collector taking over from one that is gone: `rank`'s messages are expected from
  // after `last_seq`, and the holes counted so far (`gaps`) go on from there.
  void continueFrom(int rank, int64_t last_seq, int64_t gaps);

 private:
  struct Socket;
  std::string run_id_;
  int world_;
  std::string endpoint_;
  std::unique_ptr<Socket> socket_;
  std::vector<int64_t> next_seq_;  // per rank; -1 before the first message
  std::vector<int64_t> gaps_;
  std::vector<RejectedMessage> rejected_;
  std::set<std::string> refused_addresses_;  // CURVE: peers refused so far

  void secure(const CollectorCurve& curve);
  void answerSecurityRequests();
  void countFailedHandshakes();
};

}  // namespace ranklab
