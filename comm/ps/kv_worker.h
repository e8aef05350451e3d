// The worker side of the parameter server (ps-lite's KVWorker): push gradients and pull
// parameters, sliced by key range across the server ranks. Every call returns a ticket to
// wait() on, so a worker can keep computing while bytes move; one ticket at a time.
// With a codec (CodecOptions::compresses()) pushes and their replies are compressed
// per shard (shard_codecs.h); the servers must be given the same options.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/collectives/allreduce.h"  // CommSpans
#include "comm/communicator.h"
#include "comm/ps/key_ranges.h"
#include "comm/ps/ps_messages.h"

namespace ranklab {

class ShardPushEncoder;

// What one push/pull round cost and found, over all servers.
struct PsRoundStats {
  int64_t held_ns = 0;    // longest a server held its reply back (waiting, not moving bytes)
  int64_t staleness = 0;  // largest staleness a server measured for this push
  int64_t version = 0;    // smallest shard version in the replies
  int64_t bytes_tx = 0;
  int64_t bytes_rx = 0;
  int64_t bytes_raw_tx = 0;  // what the requests would have been uncompressed
  int64_t bytes_raw_rx = 0;  // what the replies would have been uncompressed
  int64_t codec_ns = 0;      // encoding the push, decoding the replies
  int64_t sends = 0;         // messages to the servers (a header, and a payload with one)
  int64_t recvs = 0;         // messages from them (a reply, and a body with one)
};

class KvWorker;

class PsTicket {
 public:
  PsTicket() = default;
  PsTicket(PsTicket&&) = default;
  PsTicket& operator=(PsTicket&&) = default;
  // Returns once every request is sent and every reply has arrived.
  PsRoundStats wait();

 private:
  friend class KvWorker;
  // Traced: each shard's sends, then its replies, waited for in turn, each one a span.
  void waitTraced();
  void trace(const char* kind, size_t s, int64_t begin_ns, int64_t bytes);

  std::unique_ptr<std::vector<PsRequest>> requests_;  // headers stay alive until sent
  std::unique_ptr<std::vector<PsReply>> replies_;     // filled by the receives
  std::vector<Ticket> sends_;
  std::vector<Ticket> receives_;
  KvWorker* bodies_from_ = nullptr;  // set: wait() receives the reply bodies through it
  float* params_ = nullptr;
  PsRoundStats stats_;
  CommSpans* trace_ = nullptr;  // set: per shard a "ps-push" and a "ps-reply" span
  const std::vector<int>* servers_ = nullptr;
  int64_t posted_ns_ = 0;
  std::vector<int64_t> shard_tx_, shard_rx_;  // bytes per shard
  std::vector<int64_t> pushed_ns_;            // when each shard's push had left
};

// Encodes shard `shard`'s n floats at `grads` (its slice of the push, wherever the gradient
// lives) into `payload`, with the job's codec.
using ShardEncode =
    std::function<void(size_t shard, const float* grads, size_t n, std::vector<uint8_t>& payload)>;

class KvWorker {
 public:
  // comm: the whole world; server_ranks[s] holds key range s of slicer(keys, servers).
  KvWorker(Communicator& comm, int worker_index, std::vector<int> server_ranks, size_t keys,
           const KeySlicer& slicer = evenKeyRanges, const CodecOptions& codec = {});
  ~KvWorker();

  // Worker 0 only, before anyone pushes: seeds every server's shard (uncompressed).
  void init(const float* params);
  // Sends grads (to be applied at `lr`); params receives each shard after its server
  // applied them. With a codec params must hold what the last reply left there.
  PsTicket pushPull(const float* grads, float* params, double lr);
  // The parameters exactly, whatever the codec.
  PsTicket pull(float* params);
  // No more requests from this worker.
  void stop();
  // Non-null: each later push's pieces are appended here (its shards' push and reply); null
  // stops it.
  void traceInto(CommSpans* sink) { trace_ = sink; }

  // Compressed only: each later push's shards go through `encode` (a device's encoders,
  // engine/train/device_ps_sync.h) instead of this worker's own, and pushPull() reads its
  // grads only through it.
  void encodeWith(ShardEncode encode);

  const std::vector<KeyRange>& ranges() const { return ranges_; }
  bool compressed() const { return !encoders_.empty(); }
  // Shard s's push encoder (compressed only), for its residual.
  const ShardPushEncoder& pushEncoder(size_t s) const { return *encoders_.at(s); }

 private:
  friend class PsTicket;
  PsTicket request(PsOp op, const float* payload, float* params, double lr = 0);
  // Posts the reply receives first, so a server never waits for a receive to be posted;
  // with a codec only the headers (the bodies' sizes come in them).
  void postReplies(PsTicket& ticket, float* params);
  void send(PsTicket& ticket, size_t s, PsOp op, const void* payload, int64_t bytes, double lr);
  // Encodes each shard's slice of grads into payloads_.
  void encodePush(const float* grads, PsRoundStats& stats);
  // In server order: each reply header, then its body into params.
  void receiveBodies(PsTicket& ticket);

  Communicator& comm_;
  int worker_;
  std::vector<int> servers_;
  size_t keys_;
  std::vector<KeyRange> ranges_;
  std::vector<std::unique_ptr<ShardPushEncoder>> encoders_;    // per shard; empty: no codec
  ShardEncode encode_;                                         // set: used instead of encoders_
  std::vector<std::unique_ptr<GradientCodec>> pull_decoders_;  // per shard
  std::vector<std::vector<uint8_t>> payloads_;                 // per shard, alive until sent
  std::vector<float> scratch_;
  std::vector<uint8_t> body_;
  CommSpans* trace_ = nullptr;
};

}  // namespace ranklab
