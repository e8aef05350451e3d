#include "comm/ps/async_server.h"

#include <algorithm>
#include <limits>

#include "comm/steady_clock.h"

namespace ranklab {

AsyncServer::AsyncServer(ParameterShard& shard, UpdateHandler update, AsyncServerOptions options)
    : shard_(shard), update_(std::move(update)), options_(options) {}

bool AsyncServer::tooFarAhead(int worker) const {
  if (options_.staleness_bound < 0) return false;
  int64_t slowest = std::numeric_limits<int64_t>::max();
  for (size_t w = 0; w < clocks_.size(); ++w)
    if (active_[w]) slowest = std::min(slowest, clocks_[w]);
  return clocks_[worker] - slowest > options_.staleness_bound;
}

void AsyncServer::replyTo(int worker, int64_t staleness, int64_t held_ns, bool exact) {
  shard_.reply(worker, staleness, held_ns, exact);
  seen_version_[worker] = shard_.version();
  // What the worker computes its next gradient on (with a codec, its copy, not the shard).
  if (!backup_.empty()) std::copy_n(shard_.heldBy(worker), shard_.size(), backup_[worker].begin());
}

void AsyncServer::releaseHeld() {
  // A push or a stop may have moved the slowest worker's clock: answer who may go on.
  const int64_t now = steadyNowNs();
  std::erase_if(held_, [&](const HeldReply& h) {
    if (tooFarAhead(h.worker)) return false;
    replyTo(h.worker, h.staleness, now - h.arrived_ns);
    return true;
  });
}

void AsyncServer::push(const ShardRequest& request) {
  const int w = request.worker;
  const int64_t staleness = shard_.version() - seen_version_[w];
  float* grads = shard_.payload();
  if (!backup_.empty()) {
    // Taylor correction for the updates this gradient did not see.
    const float lambda = static_cast<float>(options_.delay_compensation);
    const float* now = shard_.params();
    const float* then = backup_[w].data();
    for (size_t i = 0; i < shard_.size(); ++i)
      grads[i] += lambda * grads[i] * grads[i] * (now[i] - then[i]);
  }
  shard_.apply(update_, grads, request.header.lr);
  ++clocks_[w];
  if (tooFarAhead(w)) {
    held_.push_back({w, staleness, request.arrived_ns});
  } else {
    replyTo(w, staleness, 0);
  }
  releaseHeld();
}

void AsyncServer::run() {
  shard_.receiveInit();
  const int workers = shard_.workers();
  clocks_.assign(workers, 0);
  active_.assign(workers, true);
  seen_version_.assign(workers, 0);
  if (options_.delay_compensation > 0) {
    backup_.assign(workers, std::vector<float>(shard_.params(), shard_.params() + shard_.size()));
  }
  int active = workers;
  while (active > 0) {
    const ShardRequest request = shard_.next();
    switch (request.header.op) {
      case PsOp::kPush:
        push(request);
        break;
      case PsOp::kPull:
        replyTo(request.worker, 0, 0, true);
        break;
      case PsOp::kStop:
        active_[request.worker] = false;
        --active;
        releaseHeld();
        break;
      case PsOp::kInit:
        break;  // only worker 0 sends it, once, before anything else
    }
    shard_.reportLoad();
  }
  shard_.reportLoad(true);
}

}  // namespace ranklab
