#include "comm/ps/sync_server.h"

#include <algorithm>

#include "comm/collectives/sum_into.h"

namespace ranklab {

SyncServer::SyncServer(ParameterShard& shard, UpdateHandler update)
    : shard_(shard), update_(std::move(update)) {}

void SyncServer::closeRound() {
  // The mean of the round's gradients, applied once; replies leave in push order.
  const float scale = 1.f / static_cast<float>(waiting_.size());
  for (float& g : sum_) g *= scale;
  shard_.apply(update_, sum_.data(), lr_);
  for (int worker : waiting_) shard_.reply(worker, 0, last_push_ns_ - arrived_ns_[worker]);
  std::fill(sum_.begin(), sum_.end(), 0.f);
  waiting_.clear();
}

void SyncServer::run() {
  shard_.receiveInit();
  sum_.assign(shard_.size(), 0.f);
  arrived_ns_.assign(shard_.workers(), 0);
  int active = shard_.workers();
  while (active > 0) {
    const ShardRequest request = shard_.next();
    switch (request.header.op) {
      case PsOp::kPush:
        sumInto(sum_.data(), shard_.payload(), shard_.size());
        waiting_.push_back(request.worker);
        lr_ = request.header.lr;  // the workers are at the same step
        arrived_ns_[request.worker] = last_push_ns_ = request.arrived_ns;
        break;
      case PsOp::kPull:
        shard_.reply(request.worker, 0, 0, true);
        break;
      case PsOp::kStop:
        --active;
        break;
      case PsOp::kInit:
        break;  // only worker 0 sends it, once, before anything else
    }
    if (!waiting_.empty() && static_cast<int>(waiting_.size()) >= active) closeRound();
    shard_.reportLoad();
  }
  shard_.reportLoad(true);
}

}  // namespace ranklab
