#include "comm/collectives/hierarchical_allreduce.h"

namespace ranklab {

HierarchicalAllreduce::HierarchicalAllreduce(Communicator& comm, int ranks_per_host) {
  host_ = ranks_per_host > 0 ? comm.split(comm.rank() / ranks_per_host, comm.rank())
                             : comm.splitByHost();
  const bool leader = host_->rank() == 0;
  leaders_ = comm.split(leader ? 0 : -1, comm.rank());
  // Every rank learns the host count: leaders count themselves, then tell their host.
  float count = leader ? 1.f : 0.f;
  comm.allreduceSumNative(&count, 1);
  hosts_ = static_cast<int>(count);
  if (leaders_) ring_ = std::make_unique<RingAllreduce>(*leaders_);
  inside_ = std::make_unique<ShmAllreduce>(*host_);
}

void HierarchicalAllreduce::broadcastFromLeader(float* data, size_t count) {
  // The reduction tree run backwards: each rank receives once, then feeds its subtree.
  const int r = host_->rank(), n = host_->size();
  const size_t bytes = count * sizeof(float);
  int top = 1;
  while (top < n) top <<= 1;
  for (int mask = top >> 1; mask > 0; mask >>= 1) {
    if (r % (2 * mask) == 0 && r + mask < n) {
      host_->send(data, bytes, r + mask, tags::kCollective);
      bytes_sent_ += static_cast<int64_t>(bytes);
    } else if (r % (2 * mask) == mask) {
      host_->recv(data, bytes, r - mask, tags::kCollective);
      bytes_received_ += static_cast<int64_t>(bytes);
    }
  }
}

void HierarchicalAllreduce::run(float* data, size_t count) {
  bytes_sent_ = bytes_received_ = 0;
  if (count == 0) return;
  // Every rank of a host ends with the host's sum; with one host that is the answer.
  inside_->run(data, count);
  bytes_sent_ += inside_->bytesSent();
  bytes_received_ += inside_->bytesReceived();
  if (hosts_ == 1) return;
  if (ring_) {
    ring_->run(data, count);
    bytes_sent_ += ring_->bytesSent();
    bytes_received_ += ring_->bytesReceived();
  }
  broadcastFromLeader(data, count);
}

}  // namespace ranklab
