#include "comm/ps/kv_worker.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace ranklab {

PsRoundStats PsTicket::wait() {
  waitAll(sends_);
  waitAll(receives_);
  PsRoundStats stats;
  stats.bytes_tx = bytes_tx_;
  stats.bytes_rx = bytes_rx_;
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
                   const KeySlicer& slicer)
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
}

PsTicket KvWorker::request(PsOp op, const float* payload, float* params, double lr) {
  const bool replies = op == PsOp::kPush || op == PsOp::kPull;
  PsTicket ticket;
  ticket.requests_ = std::make_unique<std::vector<PsRequest>>(servers_.size());
  ticket.replies_ = std::make_unique<std::vector<PsReply>>(replies ? servers_.size() : 0);
  for (size_t s = 0; s < servers_.size(); ++s) {
    const KeyRange& range = ranges_[s];
    if (replies) {
      ticket.receives_.push_back(
          comm_.irecv(&(*ticket.replies_)[s], sizeof(PsReply), servers_[s], tags::kPsReply));
      ticket.receives_.push_back(comm_.irecv(params + range.begin, range.size() * sizeof(float),
                                             servers_[s], tags::kPsParams));
      ticket.bytes_rx_ += static_cast<int64_t>(sizeof(PsReply) + range.size() * sizeof(float));
    }
    PsRequest& header = (*ticket.requests_)[s];
    header.op = op;
    header.worker = worker_;
    header.count = payload ? static_cast<int64_t>(range.size()) : 0;
    header.total = static_cast<int64_t>(keys_);
    header.lr = lr;
    ticket.sends_.push_back(comm_.isend(&header, sizeof header, servers_[s], tags::kPsRequest));
    ticket.bytes_tx_ += static_cast<int64_t>(sizeof header);
    if (payload) {
      ticket.sends_.push_back(comm_.isend(payload + range.begin, range.size() * sizeof(float),
                                          servers_[s], tags::kPsPayload));
      ticket.bytes_tx_ += static_cast<int64_t>(range.size() * sizeof(float));
    }
  }
  return ticket;
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
