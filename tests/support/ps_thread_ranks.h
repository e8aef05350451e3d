// Test support: a parameter server with its workers and servers as threads over the
// in-memory transport. Ranks 0..W-1 run `worker` (given a communicator of the workers
// alone, for barriers), ranks W..W+S-1 serve with a sync or async server under plain SGD.
#pragma once

#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/memory/thread_communicator.h"
#include "comm/ps/async_server.h"
#include "comm/ps/kv_worker.h"
#include "comm/ps/sync_server.h"

namespace ranklab::testing {

inline UpdateHandler plainSgd() {
  return [](float* p, const float* g, size_t n, double lr) {
    for (size_t i = 0; i < n; ++i) p[i] -= static_cast<float>(lr) * g[i];
  };
}

inline std::vector<int> rankRange(int begin, int count) {
  std::vector<int> ranks(count);
  for (int i = 0; i < count; ++i) ranks[i] = begin + i;
  return ranks;
}

struct PsSetup {
  int workers = 1;
  int servers = 1;
  bool sync = true;
  AsyncServerOptions async;  // when !sync
  size_t keys = 10;
  CodecOptions codec;  // "none": plain floats
};

using PsWorkerFn = std::function<void(Communicator& workers, KvWorker& kv)>;
// Called on each server's thread once it has served everyone (under a lock).
using PsShardFn = std::function<void(int shard, const ParameterShard& shard_state)>;

inline void runPs(const PsSetup& setup, const PsWorkerFn& worker,
                  std::vector<ServerLoad>* loads = nullptr, const PsShardFn& after = {}) {
  const int workers = setup.workers, servers = setup.servers;
  ThreadRendezvous rendezvous(workers + servers);
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (int r = 0; r < workers + servers; ++r) {
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(rendezvous, r);
      auto peers = comm.split(r < workers ? 0 : -1, r);
      if (r < workers) {
        KvWorker kv(comm, r, rankRange(workers, servers), setup.keys, evenKeyRanges, setup.codec);
        worker(*peers, kv);
        kv.stop();
        return;
      }
      LoadReporter report = [&](const ServerLoad& load) {
        std::lock_guard lock(mutex);
        if (loads) loads->push_back(load);
      };
      ParameterShard shard(comm, r - workers, servers, rankRange(0, workers), evenKeyRanges, report,
                           1000000, setup.codec);
      if (setup.sync) {
        SyncServer(shard, plainSgd()).run();
      } else {
        AsyncServer(shard, plainSgd(), setup.async).run();
      }
      std::lock_guard lock(mutex);
      if (after) after(r - workers, shard);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace ranklab::testing
