#include "comm/ps/kv_worker.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "comm/ps/shard_codecs.h"
#include "comm/steady_clock.h"

namespace ranklab {

void PsTicket::trace(const char* kind, size_t s, int64_t begin_ns, int64_t bytes) {
  CommSpan span;
  span.kind = kind;
  span.part = static_cast<int>(s);
  span.peer = (*servers_)[s];
  span.bytes = bytes;
  span.begin_ns = begin_ns;
  span.end_ns = steadyNowNs();
  trace_->push_back(span);
}

// Sends and receives are posted per shard in the same order (kv_worker.cpp, request and
// postReplies), so shard s's come in one run of each list.
void PsTicket::waitTraced() {
  const size_t shards = servers_->size();
  const size_t sends_each = sends_.size() / shards, receives_each = receives_.size() / shards;
  pushed_ns_.assign(shards, posted_ns_);
  for (size_t s = 0; s < shards; ++s) {
    for (size_t k = 0; k < sends_each; ++k) sends_[s * sends_each + k]->wait();
    trace("ps-push", s, posted_ns_, shard_tx_[s]);
    pushed_ns_[s] = trace_->back().end_ns;
  }
  if (bodies_from_) {
    bodies_from_->receiveBodies(*this);  // traces each reply itself
    return;
  }
  for (size_t s = 0; s < shards; ++s) {
    for (size_t k = 0; k < receives_each; ++k) receives_[s * receives_each + k]->wait();
    trace("ps-reply", s, pushed_ns_[s], shard_rx_[s]);
  }
}

PsRoundStats PsTicket::wait() {
  if (trace_) {
    waitTraced();
  } else {
    waitAll(sends_);
    if (bodies_from_)
      bodies_from_->receiveBodies(*this);
    else
      waitAll(receives_);
  }
  PsRoundStats stats = stats_;
  if (!replies_ || replies_->empty()) return stats;
  stats.version = std::numeric_limits<int64_t>::max();
  for (const auto& reply : *replies_) {
    stats.held_ns = std::max(stats.held_ns, reply.held_ns);
    stats.staleness = std::max(stats.staleness, reply.staleness);
    stats.version = std::min(stats.version, reply.version);
  }
  return stats;
}

KvWorker::KvWorker(Communicator& comm, int worker_index, std::vector<int> server_ranks, size_t keys,
                   const KeySlicer& slicer, const CodecOptions& codec)
    : comm_(comm),
      worker_(worker_index),
      servers_(std::move(server_ranks)),
      keys_(keys),
      ranges_(slicer(keys, static_cast<int>(servers_.size()))) {
  if (ranges_.size() != servers_.size() || (!ranges_.empty() && ranges_.back().end != keys)) {
    throw std::invalid_argument(
        "KvWorker: the key slicer returned " + std::to_string(ranges_.size()) + " ranges for " +
        std::to_string(servers_.size()) + " servers and " + std::to_string(keys) + " keys");
  }
  if (!codec.compresses()) return;
  checkPsCodec(codec);
  for (size_t s = 0; s < servers_.size(); ++s) {
    encoders_.push_back(std::make_unique<ShardPushEncoder>(codec, worker_));
    pull_decoders_.push_back(makePullCodec(codec));
  }
  payloads_.resize(servers_.size());
}

KvWorker::~KvWorker() = default;

void KvWorker::postReplies(PsTicket& ticket, float* params) {
  ticket.replies_ = std::make_unique<std::vector<PsReply>>(servers_.size());
  ticket.params_ = params;
  if (compressed()) ticket.bodies_from_ = this;
  for (size_t s = 0; s < servers_.size(); ++s) {
    ticket.receives_.push_back(
        comm_.irecv(&(*ticket.replies_)[s], sizeof(PsReply), servers_[s], tags::kPsReply));
    ++ticket.stats_.recvs;
    if (compressed()) continue;
    const KeyRange& range = ranges_[s];
    ticket.receives_.push_back(comm_.irecv(params + range.begin, range.size() * sizeof(float),
                                           servers_[s], tags::kPsParams));
    ++ticket.stats_.recvs;
    const auto bytes = static_cast<int64_t>(sizeof(PsReply) + range.size() * sizeof(float));
    if (ticket.trace_) ticket.shard_rx_[s] = bytes;
    ticket.stats_.bytes_rx += bytes;
    ticket.stats_.bytes_raw_rx += bytes;
  }
}

void KvWorker::send(PsTicket& ticket, size_t s, PsOp op, const void* payload, int64_t bytes,
                    double lr) {
  // An empty shard's payload may have no address, so ask the op, not the pointer.
  const bool carries = op == PsOp::kInit || op == PsOp::kPush;
  PsRequest& header = (*ticket.requests_)[s];
  header.op = op;
  header.worker = worker_;
  header.count = carries ? static_cast<int64_t>(ranges_[s].size()) : 0;
  header.bytes = carries ? bytes : 0;
  header.total = static_cast<int64_t>(keys_);
  header.lr = lr;
  ticket.sends_.push_back(comm_.isend(&header, sizeof header, servers_[s], tags::kPsRequest));
  if (carries) {
    ticket.sends_.push_back(comm_.isend(payload, header.bytes, servers_[s], tags::kPsPayload));
  }
  ticket.stats_.sends += carries ? 2 : 1;
  const int64_t raw = static_cast<int64_t>(sizeof header) + header.count * int64_t{sizeof(float)};
  ticket.stats_.bytes_tx += static_cast<int64_t>(sizeof header) + header.bytes;
  if (ticket.trace_) ticket.shard_tx_[s] = int64_t{sizeof header} + header.bytes;
  ticket.stats_.bytes_raw_tx += raw;
}

PsTicket KvWorker::request(PsOp op, const float* payload, float* params, double lr) {
  PsTicket ticket;
  ticket.requests_ = std::make_unique<std::vector<PsRequest>>(servers_.size());
  if (trace_ && op == PsOp::kPush && !servers_.empty()) {  // a step's round, nothing else
    ticket.trace_ = trace_;
    ticket.servers_ = &servers_;
    ticket.posted_ns_ = steadyNowNs();
    ticket.shard_tx_.assign(servers_.size(), 0);
    ticket.shard_rx_.assign(servers_.size(), 0);
  }
  if (op == PsOp::kPush || op == PsOp::kPull) postReplies(ticket, params);
  const bool encoded = op == PsOp::kPush && compressed();
  if (encoded) encodePush(payload, ticket.stats_);
  for (size_t s = 0; s < servers_.size(); ++s) {
    if (encoded) {
      send(ticket, s, op, payloads_[s].data(), static_cast<int64_t>(payloads_[s].size()), lr);
    } else {
      const KeyRange& range = ranges_[s];
      send(ticket, s, op, payload ? payload + range.begin : nullptr,
           static_cast<int64_t>(range.size() * sizeof(float)), lr);
    }
  }
  return ticket;
}

void KvWorker::encodeWith(ShardEncode encode) {
  if (!compressed()) throw std::logic_error("KvWorker: encodeWith() without a codec");
  encode_ = std::move(encode);
}

void KvWorker::encodePush(const float* grads, PsRoundStats& stats) {
  const int64_t start = steadyNowNs();
  if (encode_) {
    for (size_t s = 0; s < servers_.size(); ++s)
      encode_(s, grads + ranges_[s].begin, ranges_[s].size(), payloads_[s]);
  } else {
    scratch_.assign(grads, grads + keys_);  // error feedback works in place; grads stay as given
    for (size_t s = 0; s < servers_.size(); ++s)
      encoders_[s]->encode(scratch_.data() + ranges_[s].begin, ranges_[s].size(), payloads_[s]);
  }
  stats.codec_ns += steadyNowNs() - start;
}

void KvWorker::receiveBodies(PsTicket& ticket) {
  for (size_t s = 0; s < servers_.size(); ++s) {
    ticket.receives_[s]->wait();
    const PsReply& reply = (*ticket.replies_)[s];
    const size_t n = ranges_[s].size();
    const bool exact = reply.body == PsBody::kParams;
    if (static_cast<size_t>(reply.count) != n ||
        (exact && static_cast<size_t>(reply.bytes) != n * sizeof(float))) {
      throw std::runtime_error("KvWorker: server " + std::to_string(s) + " replied " +
                               std::to_string(reply.count) + " parameters in " +
                               std::to_string(reply.bytes) + " bytes for a " + std::to_string(n) +
                               "-key range");
    }
    float* out = ticket.params_ + ranges_[s].begin;
    if (exact) {
      comm_.recv(out, n * sizeof(float), servers_[s], tags::kPsParams);
    } else {
      body_.resize(static_cast<size_t>(reply.bytes));
      comm_.recv(body_.data(), body_.size(), servers_[s], tags::kPsParams);
      ++ticket.stats_.recvs;
      const int64_t start = steadyNowNs();
      if (n > 0) pull_decoders_[s]->decode(body_.data(), body_.size(), n, out, DecodeMode::kAdd);
      ticket.stats_.codec_ns += steadyNowNs() - start;
    }
    ticket.stats_.bytes_rx += static_cast<int64_t>(sizeof(PsReply)) + reply.bytes;
    ticket.stats_.bytes_raw_rx += static_cast<int64_t>(sizeof(PsReply) + n * sizeof(float));
    if (ticket.trace_)
      ticket.trace("ps-reply", s, ticket.pushed_ns_[s], int64_t{sizeof(PsReply)} + reply.bytes);
  }
  ticket.receives_.clear();
}

void KvWorker::init(const float* params) {
  request(PsOp::kInit, params, nullptr).wait();
}

PsTicket KvWorker::pushPull(const float* grads, float* params, double lr) {
  return request(PsOp::kPush, grads, params, lr);
}

PsTicket KvWorker::pull(float* params) {
  return request(PsOp::kPull, nullptr, params);
}

void KvWorker::stop() {
  request(PsOp::kStop, nullptr, nullptr).wait();
}

}  // namespace ranklab
