#include "comm/ps/sync_server.h"

#include <algorithm>

#include "comm/collectives/sum_into.h"

namespace ranklab {

SyncServer::SyncServer(ParameterShard& shard, UpdateHandler update)
    : shard_(shard), update_(std::move(update)) {}

void SyncServer::closeRound() {
  // The mean of the round's gradients, summed in worker order whatever order they came in
  // (floats add differently in another order: a run would not repeat itself), applied
  // once; replies leave in push order.
  std::vector<int> in_order = waiting_;
  std::sort(in_order.begin(), in_order.end());
  for (int worker : in_order) sumInto(sum_.data(), pushes_[worker].data(), shard_.size());
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
  pushes_.resize(shard_.workers());
  int active = shard_.workers();
  while (active > 0) {
    const ShardRequest request = shard_.next();
    switch (request.header.op) {
      case PsOp::kPush:
        pushes_[request.worker].assign(shard_.payload(), shard_.payload() + shard_.size());
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
