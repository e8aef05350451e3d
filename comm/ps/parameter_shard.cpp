#include "comm/ps/parameter_shard.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "comm/ps/shard_codecs.h"
#include "comm/steady_clock.h"

namespace ranklab {

ParameterShard::ParameterShard(Communicator& comm, int shard_index, int servers,
                               std::vector<int> worker_ranks, KeySlicer slicer, LoadReporter report,
                               int report_ms, CodecOptions codec)
    : comm_(comm),
      shard_(shard_index),
      servers_(servers),
      worker_ranks_(std::move(worker_ranks)),
      slicer_(std::move(slicer)),
      report_(std::move(report)),
      report_ns_(int64_t{report_ms} * 1000000),
      codec_(std::move(codec)) {
  if (codec_.compresses()) checkPsCodec(codec_);
}

ParameterShard::~ParameterShard() {
  for (auto& send : body_sends_)
    if (send) send->wait();
}

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
  if (codec_.compresses()) {
    // Every worker starts from the model worker 0 sent (the same seed, or the checkpoint).
    for (int w = 0; w < workers(); ++w)
      channels_.push_back(std::make_unique<WorkerChannel>(codec_, w, params_.data(), size()));
    bodies_.resize(workers());
    body_sends_.resize(workers());
  }
  load_.shard = shard_;
  load_.range = range_;
  interval_start_ns_ = steadyNowNs();
}

ShardRequest ParameterShard::next() {
  const int64_t start = steadyNowNs();
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
    receivePush(request, info.source);
  } else if (request.header.op == PsOp::kPull) {
    ++load_.pulls;
  }
  request.arrived_ns = steadyNowNs();
  load_.idle_ns += request.arrived_ns - start;
  return request;
}

void ParameterShard::receivePush(const ShardRequest& request, int source) {
  const PsRequest& h = request.header;
  const bool plain = channels_.empty();
  if (static_cast<size_t>(h.count) != payload_.size() ||
      (plain && static_cast<size_t>(h.bytes) != payload_.size() * sizeof(float))) {
    throw std::runtime_error("parameter server " + std::to_string(shard_) + ": worker " +
                             std::to_string(request.worker) + " pushed " + std::to_string(h.count) +
                             " gradients in " + std::to_string(h.bytes) + " bytes for " +
                             std::to_string(payload_.size()) + " keys");
  }
  if (plain) {
    comm_.recv(payload_.data(), payload_.size() * sizeof(float), source, tags::kPsPayload);
  } else {
    push_bytes_.resize(static_cast<size_t>(h.bytes));
    comm_.recv(push_bytes_.data(), push_bytes_.size(), source, tags::kPsPayload);
    const int64_t start = steadyNowNs();
    channels_[request.worker]->decodePush(push_bytes_.data(), push_bytes_.size(), payload_.data());
    load_.busy_ns += steadyNowNs() - start;
  }
  load_.bytes_rx += h.bytes;
  ++load_.pushes;
}

void ParameterShard::apply(const UpdateHandler& update, const float* grads, double lr) {
  const int64_t start = steadyNowNs();
  update(params_.data(), grads, params_.size(), lr);
  ++version_;
  load_.busy_ns += steadyNowNs() - start;
}

void ParameterShard::reply(int worker, int64_t staleness, int64_t held_ns, bool exact) {
  const auto n = static_cast<int64_t>(params_.size());
  PsReply header{version_, staleness, held_ns, n, n * int64_t{sizeof(float)}, PsBody::kParams};
  if (channels_.empty()) {
    const int rank = worker_ranks_.at(worker);
    // The worker posted both receives before asking, so these sends complete promptly.
    Ticket head = comm_.isend(&header, sizeof header, rank, tags::kPsReply);
    Ticket body =
        comm_.isend(params_.data(), params_.size() * sizeof(float), rank, tags::kPsParams);
    head->wait();
    body->wait();
  } else {
    // The worker received the previous body before it asked again: the buffer is free.
    if (body_sends_[worker]) body_sends_[worker]->wait();
    std::vector<uint8_t>& body = bodies_[worker];
    const int64_t start = steadyNowNs();
    if (exact) {
      body.resize(params_.size() * sizeof(float));
      std::memcpy(body.data(), params_.data(), body.size());
      channels_[worker]->resetHeld(params_.data());
    } else {
      channels_[worker]->encodeDelta(params_.data(), body);
      header.body = PsBody::kDelta;
      header.bytes = static_cast<int64_t>(body.size());
    }
    load_.busy_ns += steadyNowNs() - start;
    sendBody(worker, header, body.data());
  }
  load_.bytes_tx += static_cast<int64_t>(sizeof header) + header.bytes;
  load_.bytes_raw += static_cast<int64_t>(sizeof header) + n * int64_t{sizeof(float)};
  load_.held_ns += held_ns;
  load_.max_staleness = std::max(load_.max_staleness, staleness);
}

void ParameterShard::sendBody(int worker, const PsReply& header, const void* body) {
  const int rank = worker_ranks_.at(worker);
  // The header's receive is posted; the body's is posted once the worker has read the
  // header, so its send completes later, while this server serves others.
  comm_.isend(&header, sizeof header, rank, tags::kPsReply)->wait();
  body_sends_[worker] = comm_.isend(body, static_cast<size_t>(header.bytes), rank, tags::kPsParams);
}

const float* ParameterShard::heldBy(int worker) const {
  return channels_.empty() ? params_.data() : channels_.at(worker)->held();
}

void ParameterShard::reportLoad(bool force) {
  const int64_t now = steadyNowNs();
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
