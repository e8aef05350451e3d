// Test support: a world of ranks as threads over the in-memory transport.
#pragma once

#include <functional>
#include <thread>
#include <vector>

#include "comm/memory/thread_communicator.h"

namespace ranklab::testing {

// Runs body(comm) on every rank of a world of `world` threads; ranks_per_host > 0 makes
// the transport pretend groups of that many ranks sit on separate hosts.
inline void onEveryRank(int world, const std::function<void(Communicator&)>& body,
                        int ranks_per_host = 0) {
  ThreadRendezvous rendezvous(world, ranks_per_host);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(rendezvous, r);
      body(comm);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace ranklab::testing
