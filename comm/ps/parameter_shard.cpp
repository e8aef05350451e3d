#include "comm/ps/parameter_shard.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

namespace ranklab {

int64_t ParameterShard::nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ParameterShard::ParameterShard(Communicator& comm, int shard_index, int servers,
                               std::vector<int> worker_ranks, KeySlicer slicer, LoadReporter report,
                               int report_ms)
    : comm_(comm),
      shard_(shard_index),
      servers_(servers),
      worker_ranks_(std::move(worker_ranks)),
      slicer_(std::move(slicer)),
      report_(std::move(report)),
      report_ns_(int64_t{report_ms} * 1000000) {}

void ParameterShard::receiveInit() {
  PsRequest header;
  comm_.recv(&header, sizeof header, worker_ranks_.at(0), tags::kPsRequest);
  if (header.op != PsOp::kInit) {
    throw std::runtime_error("parameter server " + std::to_string(shard_) +
                             ": expected init from worker 0, got op " +
                             std::to_string(static_cast<int>(header.op)));
  }
  range_ = slicer_(static_cast<size_t>(header.total), servers_).at(shard_);
  if (static_cast<size_t>(header.count) != range_.size()) {
    throw std::runtime_error("parameter server " + std::to_string(shard_) + ": init carries " +
                             std::to_string(header.count) + " parameters, the key range holds " +
                             std::to_string(range_.size()));
  }
  params_.resize(range_.size());
  payload_.resize(range_.size());
  comm_.recv(params_.data(), params_.size() * sizeof(float), worker_ranks_[0], tags::kPsPayload);
  load_.shard = shard_;
  load_.range = range_;
  interval_start_ns_ = nowNs();
}

ShardRequest ParameterShard::next() {
  const int64_t start = nowNs();
  const MessageInfo info = comm_.probe(Communicator::kAnySource, tags::kPsRequest);
  ShardRequest request;
  comm_.recv(&request.header, sizeof request.header, info.source, tags::kPsRequest);
  const auto it = std::find(worker_ranks_.begin(), worker_ranks_.end(), info.source);
  if (it == worker_ranks_.end() || info.bytes != sizeof(PsRequest)) {
    throw std::runtime_error("parameter server " + std::to_string(shard_) + ": a " +
                             std::to_string(info.bytes) + "-byte request from rank " +
                             std::to_string(info.source) + ", which is not a worker");
  }
  request.worker = static_cast<int>(it - worker_ranks_.begin());
  load_.bytes_rx += sizeof(PsRequest);
  if (request.header.op == PsOp::kPush) {
    if (static_cast<size_t>(request.header.count) != payload_.size()) {
      throw std::runtime_error("parameter server " + std::to_string(shard_) + ": worker " +
                               std::to_string(request.worker) + " pushed " +
                               std::to_string(request.header.count) + " gradients for " +
                               std::to_string(payload_.size()) + " keys");
    }
    comm_.recv(payload_.data(), payload_.size() * sizeof(float), info.source, tags::kPsPayload);
    load_.bytes_rx += static_cast<int64_t>(payload_.size() * sizeof(float));
    ++load_.pushes;
  } else if (request.header.op == PsOp::kPull) {
    ++load_.pulls;
  }
  request.arrived_ns = nowNs();
  load_.idle_ns += request.arrived_ns - start;
  return request;
}

void ParameterShard::apply(const UpdateHandler& update, const float* grads, double lr) {
  const int64_t start = nowNs();
  update(params_.data(), grads, params_.size(), lr);
  ++version_;
  load_.busy_ns += nowNs() - start;
}

void ParameterShard::reply(int worker, int64_t staleness, int64_t held_ns) {
  PsReply header{version_, staleness, held_ns, static_cast<int64_t>(params_.size())};
  const int rank = worker_ranks_.at(worker);
  // The worker posted both receives before asking, so these sends complete promptly.
  Ticket head = comm_.isend(&header, sizeof header, rank, tags::kPsReply);
  Ticket body = comm_.isend(params_.data(), params_.size() * sizeof(float), rank, tags::kPsParams);
  head->wait();
  body->wait();
  load_.bytes_tx += static_cast<int64_t>(sizeof header + params_.size() * sizeof(float));
  load_.held_ns += held_ns;
  load_.max_staleness = std::max(load_.max_staleness, staleness);
}

void ParameterShard::reportLoad(bool force) {
  const int64_t now = nowNs();
  if (!report_ || (!force && now - interval_start_ns_ < report_ns_)) return;
  load_.interval_ns = now - interval_start_ns_;
  load_.version = version_;
  report_(load_);
  load_ = ServerLoad{};
  load_.shard = shard_;
  load_.range = range_;
  interval_start_ns_ = now;
}

}  // namespace ranklab
