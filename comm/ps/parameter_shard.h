// What every parameter server rank does on the wire: hold one key range of the model,
// take requests from any worker, reply with the shard, and count its load. The sync and
// async servers (sync_server.h, async_server.h) decide when to apply and when to reply.
// With a codec, pushes arrive compressed and replies to them leave as compressed deltas
// against the copy each worker holds (shard_codecs.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/communicator.h"
#include "comm/ps/key_ranges.h"
#include "comm/ps/ps_messages.h"

namespace ranklab {

class WorkerChannel;

// The server's update rule, injected (ps-lite's handle): params -= f(grads, lr), n floats.
using UpdateHandler = std::function<void(float* params, const float* grads, size_t n, double lr)>;

// One shard's load over an interval (per-shard telemetry).
struct ServerLoad {
  int shard = 0;
  KeyRange range;
  int64_t interval_ns = 0;
  int64_t pushes = 0;
  int64_t pulls = 0;
  int64_t bytes_rx = 0;
  int64_t bytes_tx = 0;
  int64_t bytes_raw =
      0;  // what the replies would have been uncompressed (= bytes_tx without a codec)
  int64_t busy_ns = 0;  // applying updates, decoding pushes, encoding replies
  int64_t idle_ns = 0;  // waiting for a request
  int64_t held_ns = 0;  // replies held back, summed over the replies sent
  int64_t max_staleness = 0;
  int64_t version = 0;  // at the end of the interval
};
using LoadReporter = std::function<void(const ServerLoad&)>;

struct ShardRequest {
  PsRequest header;
  int worker = 0;          // index into the worker ranks
  int64_t arrived_ns = 0;  // steady clock, when the server took it
};

class ParameterShard {
 public:
  // comm: the world; this rank serves range shard_index of slicer(keys, servers), keys
  // learned from worker 0's init. report_ms: how often `report` hears the load.
  // codec: the workers' options (KvWorker), "none" for plain floats.
  ParameterShard(Communicator& comm, int shard_index, int servers, std::vector<int> worker_ranks,
                 KeySlicer slicer = evenKeyRanges, LoadReporter report = {}, int report_ms = 250,
                 CodecOptions codec = {});
  ~ParameterShard();

  int workers() const { return static_cast<int>(worker_ranks_.size()); }
  size_t size() const { return params_.size(); }
  float* params() { return params_.data(); }
  const float* payload() const { return payload_.data(); }
  float* payload() { return payload_.data(); }
  int64_t version() const { return version_; }

  // Blocks for worker 0's init (other workers' requests wait in the queue meanwhile).
  void receiveInit();
  // The next request of any worker; a push's gradients are in payload() afterwards.
  ShardRequest next();
  // Runs the update rule on `grads`, counting busy time; version + 1.
  void apply(const UpdateHandler& update, const float* grads, double lr);
  // Sends version, staleness, hold time and the shard to a worker: with a codec its change
  // since the worker's copy, unless `exact` (a pull) asks for the parameters as they are.
  void reply(int worker, int64_t staleness, int64_t held_ns, bool exact = false);
  // The shard as `worker` holds it since its last reply.
  const float* heldBy(int worker) const;
  // Hands the interval's load to the reporter when due (or now, with force).
  void reportLoad(bool force = false);

 private:
  void receivePush(const ShardRequest& request, int source);
  // With a codec: the reply body leaves on its own buffer while the server goes on.
  void sendBody(int worker, const PsReply& header, const void* body);

  Communicator& comm_;
  int shard_;
  int servers_;
  std::vector<int> worker_ranks_;
  KeySlicer slicer_;
  LoadReporter report_;
  int64_t report_ns_;
  KeyRange range_;
  std::vector<float> params_;
  std::vector<float> payload_;
  CodecOptions codec_;
  std::vector<std::unique_ptr<WorkerChannel>> channels_;  // per worker; empty: no codec
  std::vector<uint8_t> push_bytes_;
  std::vector<std::vector<uint8_t>> bodies_;  // per worker, alive until sent
  std::vector<Ticket> body_sends_;            // per worker, the last body's send
  int64_t version_ = 0;
  ServerLoad load_;
  int64_t interval_start_ns_ = 0;
};

}  // namespace ranklab
