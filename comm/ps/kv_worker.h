// The worker side of the parameter server (ps-lite's KVWorker): push gradients and pull
// parameters, sliced by key range across the server ranks. Every call returns a ticket to
// wait() on, so a worker can keep computing while bytes move.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "comm/ps/key_ranges.h"
#include "comm/ps/ps_messages.h"

namespace ranklab {

// What one push/pull round cost and found, over all servers.
struct PsRoundStats {
  int64_t held_ns = 0;    // longest a server held its reply back (waiting, not moving bytes)
  int64_t staleness = 0;  // largest staleness a server measured for this push
  int64_t version = 0;    // smallest shard version in the replies
  int64_t bytes_tx = 0;
  int64_t bytes_rx = 0;
};

class PsTicket {
 public:
  PsTicket() = default;
  PsTicket(PsTicket&&) = default;
  PsTicket& operator=(PsTicket&&) = default;
  // Returns once every request is sent and every reply has arrived.
  PsRoundStats wait();

 private:
  friend class KvWorker;
  std::unique_ptr<std::vector<PsRequest>> requests_;  // headers stay alive until sent
  std::unique_ptr<std::vector<PsReply>> replies_;     // filled by the receives
  std::vector<Ticket> sends_;
  std::vector<Ticket> receives_;
  int64_t bytes_tx_ = 0;
  int64_t bytes_rx_ = 0;
};

class KvWorker {
 public:
  // comm: the whole world; server_ranks[s] holds key range s of slicer(keys, servers).
  KvWorker(Communicator& comm, int worker_index, std::vector<int> server_ranks, size_t keys,
           const KeySlicer& slicer = evenKeyRanges);

  // Worker 0 only, before anyone pushes: seeds every server's shard.
  void init(const float* params);
  // Sends grads (to be applied at `lr`); params receives each shard after its server
  // applied them.
  PsTicket pushPull(const float* grads, float* params, double lr);
  PsTicket pull(float* params);
  // No more requests from this worker.
  void stop();

  const std::vector<KeyRange>& ranges() const { return ranges_; }

 private:
  // Posts the replies first, so a server never waits for a receive to be posted.
  PsTicket request(PsOp op, const float* payload, float* params, double lr = 0);

  Communicator& comm_;
  int worker_;
  std::vector<int> servers_;
  size_t keys_;
  std::vector<KeyRange> ranges_;
};

}  // namespace ranklab
