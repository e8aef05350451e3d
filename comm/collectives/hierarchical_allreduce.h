// Hierarchical all-reduce (sum, in place): a shared-memory all-reduce inside each host
// (shm_allreduce.h), ring all-reduce across the host leaders, broadcast back inside each
// host. Only leaders cross hosts, so the slow link carries 2(h-1)/h of the buffer per host
// instead of per rank; with one host it is the shared-memory all-reduce alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/collectives/ring_allreduce.h"
#include "comm/collectives/shm_allreduce.h"
#include "comm/communicator.h"

namespace ranklab {

class HierarchicalAllreduce {
 public:
  // Collective over `comm`. ranks_per_host > 0 groups consecutive ranks into hosts (for
  // demos on one machine); 0 takes hosts from the backend's shared-memory split.
  HierarchicalAllreduce(Communicator& comm, int ranks_per_host);

  void run(float* data, size_t count);

  int hosts() const { return hosts_; }
  int64_t bytesSent() const { return bytes_sent_; }
  int64_t bytesReceived() const { return bytes_received_; }

 private:
  void broadcastFromLeader(float* data, size_t count);

  std::unique_ptr<Communicator> host_;     // the ranks of this host; leader is rank 0
  std::unique_ptr<ShmAllreduce> inside_;   // over host_
  std::unique_ptr<Communicator> leaders_;  // one rank per host; null on non-leaders
  std::unique_ptr<RingAllreduce> ring_;    // over leaders_
  int hosts_ = 1;
  int64_t bytes_sent_ = 0;
  int64_t bytes_received_ = 0;
};

}  // namespace ranklab
