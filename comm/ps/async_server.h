// Asynchronous parameter server (ps-async): applies each push the moment it arrives and
// answers that worker alone. Staleness of a push = updates the shard applied since the
// worker last received parameters. With a bound s >= 0, a worker that has pushed more
// than s times beyond the slowest active worker gets its reply only once the slowest
// catches up (stale synchronous parallel). Optional delay compensation (DC-ASGD):
// g += lambda * g * g * (params_now - params_the_worker_last_received).
#pragma once

#include <cstdint>
#include <vector>

#include "comm/ps/parameter_shard.h"

namespace ranklab {

struct AsyncServerOptions {
  int staleness_bound = -1;       // -1: never hold a reply back
  double delay_compensation = 0;  // DC-ASGD lambda; 0 = off
};

class AsyncServer {
 public:
  AsyncServer(ParameterShard& shard, UpdateHandler update, AsyncServerOptions options);
  // Serves until every worker has sent stop.
  void run();

 private:
  struct HeldReply {
    int worker;
    int64_t staleness;
    int64_t arrived_ns;
  };
  void push(const ShardRequest& request);
  void replyTo(int worker, int64_t staleness, int64_t held_ns, bool exact = false);
  bool tooFarAhead(int worker) const;
  void releaseHeld();

  ParameterShard& shard_;
  UpdateHandler update_;
  AsyncServerOptions options_;
  std::vector<int64_t> clocks_;             // pushes per worker
  std::vector<bool> active_;                // false once a worker sent stop
  std::vector<int64_t> seen_version_;       // shard version each worker last received
  std::vector<std::vector<float>> backup_;  // DC-ASGD: the parameters each worker last received
  std::vector<HeldReply> held_;
};

}  // namespace ranklab
