#include "engine/train/ps_worker_sync.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/train/model_average.h"

namespace ranklab {

namespace {
// What lives on the servers (and, with a codec, in every worker's encoder) where the
// trainer's checkpoint does not reach.
std::string serverStateKeys(const JobSpec& job) {
  std::vector<std::string> keys;
  const bool plain_sgd = job.train.optimizer == OptimizerKind::kSgd &&
                         (job.train.momentum == 0 || compressesWithMomentum(job));
  if (!plain_sgd) keys.push_back("train.optimizer (its state on the servers)");
  if (job.compression.compresses()) {
    keys.push_back("compression.codec = " + job.compression.codec +
                   " (workers' and servers' codec state, error feedback, momentum correction)");
  }
  std::string text;
  for (const auto& key : keys) text += (text.empty() ? "" : ", ") + key;
  return text.empty() ? text : "parallel.strategy = " + job.parallel.strategy + ": " + text;
}
}  // namespace

ParameterServerSync::ParameterServerSync(Communicator& world, const JobSpec& job,
                                         const ComputeDevice& device, bool encode_on_device)
    : world_(world),
      workers_(world.split(0, world.rank())),
      servers_(job.parallel.servers),
      codec_(codecOptions(job)),
      not_checkpointed_(serverStateKeys(job)),
      device_(device),
      encode_on_device_(encode_on_device),
      params_copy_(device),
      grads_copy_(device) {}

ParameterServerSync::~ParameterServerSync() = default;

std::string ParameterServerSync::stateNotCheckpointed() const {
  return not_checkpointed_;
}

void ParameterServerSync::start(float* params, size_t count) {
  std::vector<int> servers(servers_);
  for (int s = 0; s < servers_; ++s) servers[s] = workers_->size() + s;
  kv_ = std::make_unique<KvWorker>(world_, workers_->rank(), servers, count, evenKeyRanges, codec_);
  params_ = params;
  if (encode_on_device_) encodeOnDevice(count);
  // Replies may be deltas applied in place: the host copy holds the model from here on.
  const float* host = params_copy_.down(params, count);
  if (workers_->rank() == 0) kv_->init(host);
}

void ParameterServerSync::encodeOnDevice(size_t count) {
  const auto& ranges = kv_->ranges();
  encoders_.clear();
  for (const KeyRange& range : ranges) {
    // As the KvWorker's own encoders: this worker's codec, its state per shard.
    encoders_.push_back(std::make_unique<DeviceEncoder>(codec_, workers_->rank(), device_));
    encoders_.back()->start(range.size());
  }
  scratch_ = device_.allocate(count);
  kv_->encodeWith(
      [this, &ranges](size_t s, const float* grads, size_t n, std::vector<uint8_t>& payload) {
        float* slice = scratch_->data() + ranges[s].begin;
        device_.copy(slice, grads, n);  // the trainer's gradient stays as it gave it
        encoders_[s]->encode(slice, n, payload, nullptr);
      });
}

SyncStats ParameterServerSync::sync(float* grads, size_t count) {
  const int64_t start = steadyNowNs();
  kv_->traceInto(trace_);
  // Off the host the push reads a host copy (or the device's, shard by shard, to encode
  // there) and the pull lands in one, copied up: moving them is part of the round.
  const float* pushed = encode_on_device_ ? grads : grads_copy_.down(grads, count);
  const PsRoundStats round = kv_->pushPull(pushed, params_copy_.of(params_, count), lr_).wait();
  params_copy_.up(params_, count);
  const int64_t total = steadyNowNs() - start;
  SyncStats stats;
  stats.wait_ns = std::min(round.held_ns, total);  // held for other workers or the bound
  stats.comm_ns = total - stats.wait_ns;
  stats.bytes_tx = round.bytes_tx;
  stats.bytes_rx = round.bytes_rx;
  stats.bytes_raw = round.bytes_raw_tx;  // the pulls' ratio is the servers' (ServerLoad)
  stats.compress_ns = round.codec_ns;
  stats.comm_ns -= std::min(stats.comm_ns, stats.compress_ns);
  stats.staleness = round.staleness;
  stats.sends = round.sends;
  stats.recvs = round.recvs;
  return stats;
}

void ParameterServerSync::refresh(float* params, size_t count) {
  // Every worker has had its last reply, so all pull the same model.
  workers_->barrier();
  kv_->pull(params_copy_.of(params, count)).wait();
  params_copy_.up(params, count);
}

void ParameterServerSync::finish() {
  kv_->stop();
}

}  // namespace ranklab
