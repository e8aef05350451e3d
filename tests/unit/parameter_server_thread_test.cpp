// The parameter server with workers and servers as threads: exact results of sync and
// async rounds under plain SGD, staleness, the staleness bound, DC-ASGD, key slicing.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <latch>
#include <thread>
#include <vector>

#include "tests/support/ps_thread_ranks.h"

namespace ranklab {
namespace {

constexpr float kLr = 0.5f;

using testing::PsSetup;

void runPs(int workers, int servers, bool sync, AsyncServerOptions options,
           const testing::PsWorkerFn& worker, std::vector<ServerLoad>* loads = nullptr,
           size_t keys = 10) {
  PsSetup setup;
  setup.workers = workers;
  setup.servers = servers;
  setup.sync = sync;
  setup.async = options;
  setup.keys = keys;
  testing::runPs(setup, worker, loads);
}

TEST(ParameterServer, EvenKeyRangesCoverTheKeysInOrder) {
  const auto ranges = evenKeyRanges(10, 3);
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0], (KeyRange{0, 4}));
  EXPECT_EQ(ranges[1], (KeyRange{4, 7}));
  EXPECT_EQ(ranges[2], (KeyRange{7, 10}));
  EXPECT_EQ(evenKeyRanges(2, 3)[2], (KeyRange{2, 2}));  // more servers than keys: empty shards
}

TEST(ParameterServer, SyncAppliesTheMeanOncePerRoundOnEveryShard) {
  constexpr int kWorkers = 3, kRounds = 4;
  std::vector<std::vector<float>> finals(kWorkers);
  std::vector<ServerLoad> loads;
  runPs(
      kWorkers, 3, true, {},
      [&](Communicator& comm, KvWorker& kv) {
        std::vector<float> params(10, 1.f), grads(10);
        if (comm.rank() == 0) kv.init(params.data());
        for (int round = 0; round < kRounds; ++round) {
          // Worker w pushes (w + 1) * (i + 1): the mean is 2 * (i + 1).
          for (size_t i = 0; i < grads.size(); ++i) grads[i] = float((comm.rank() + 1) * (i + 1));
          const PsRoundStats stats = kv.pushPull(grads.data(), params.data(), kLr).wait();
          EXPECT_EQ(stats.version, round + 1);
          EXPECT_EQ(stats.staleness, 0);
        }
        finals[comm.rank()] = params;
      },
      &loads);
  for (const auto& params : finals) {
    for (size_t i = 0; i < params.size(); ++i)
      EXPECT_EQ(params[i], 1.f - kRounds * kLr * 2.f * float(i + 1)) << "key " << i;
  }
  ASSERT_EQ(loads.size(), 3u);  // one final report per shard
  int64_t pushes = 0;
  for (const auto& load : loads) {
    pushes += load.pushes;
    EXPECT_EQ(load.version, kRounds);
    EXPECT_EQ(load.bytes_rx,
              int64_t(kWorkers * kRounds * (sizeof(PsRequest) + load.range.size() * sizeof(float)) +
                      kWorkers * sizeof(PsRequest)));  // + the stops
  }
  EXPECT_EQ(pushes, 3 * kWorkers * kRounds);
}

TEST(ParameterServer, AsyncAppliesEveryPushAndCountsStaleness) {
  constexpr int kWorkers = 4, kRounds = 5, kShards = 2;
  std::vector<int64_t> stale(kWorkers);
  std::vector<float> final_params;
  runPs(kWorkers, kShards, false, {}, [&](Communicator& comm, KvWorker& kv) {
    std::vector<float> params(10, 0.f), grads(10, 1.f);
    if (comm.rank() == 0) kv.init(params.data());
    for (int round = 0; round < kRounds; ++round) {
      stale[comm.rank()] += kv.pushPull(grads.data(), params.data(), kLr).wait().staleness;
    }
    comm.barrier();  // every push applied: a pull now sees them all
    kv.pull(params.data()).wait();
    if (comm.rank() == 0) final_params = params;
  });
  // Plain SGD commutes: whatever the order, every push of 1 moved each key by -lr.
  for (float p : final_params) EXPECT_EQ(p, -kLr * kWorkers * kRounds);
  int64_t total = 0;
  for (int64_t s : stale) total += s;
  std::printf("async, %d workers x %d pushes: total staleness %lld\n", kWorkers, kRounds,
              static_cast<long long>(total));
  // On one shard each push is counted stale at most once by each other worker. A worker's
  // staleness is the max over its shards, and a push may land before this worker's on one
  // shard and after it on the other: the bound is per shard, times the shards.
  EXPECT_LE(total, int64_t{kShards} * (kWorkers - 1) * kWorkers * kRounds);
}

TEST(ParameterServer, StalenessBoundHoldsTheFastWorkerBackUnboundedDoesNot) {
  for (int bound : {-1, 1}) {
    int64_t fast_held_ns = 0;
    runPs(2, 1, false, {bound, 0.0}, [&](Communicator& comm, KvWorker& kv) {
      std::vector<float> params(10, 0.f), grads(10, 1.f);
      if (comm.rank() == 0) kv.init(params.data());
      comm.barrier();  // init first, so the fast worker never overtakes it
      for (int round = 0; round < 6; ++round) {
        if (comm.rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const PsRoundStats stats = kv.pushPull(grads.data(), params.data(), kLr).wait();
        if (comm.rank() == 1) fast_held_ns += stats.held_ns;
      }
    });
    std::printf("bound %d: the fast worker was held %.1f ms\n", bound, fast_held_ns / 1e6);
    if (bound < 0) {
      EXPECT_EQ(fast_held_ns, 0);
    } else {
      EXPECT_GT(fast_held_ns, 40'000'000) << "at least two slow steps of 20 ms";
    }
  }
}

TEST(ParameterServer, DelayCompensationCorrectsAStaleGradient) {
  // Worker 0 pushes g0 first; worker 1 then pushes g1 computed on the initial parameters.
  const float lambda = 0.25f;
  std::vector<float> final_params;
  std::latch pulled(1), first_done(1);
  runPs(2, 1, false, {-1, lambda}, [&](Communicator& comm, KvWorker& kv) {
    std::vector<float> params(10, 1.f), grads(10, comm.rank() == 0 ? 2.f : 4.f);
    if (comm.rank() == 0) {
      kv.init(params.data());
      pulled.wait();  // worker 1 holds the initial parameters before anyone pushes
      kv.pushPull(grads.data(), params.data(), kLr).wait();
      first_done.count_down();
      return;
    }
    kv.pull(params.data()).wait();
    pulled.count_down();
    first_done.wait();
    const PsRoundStats stats = kv.pushPull(grads.data(), params.data(), kLr).wait();
    EXPECT_EQ(stats.staleness, 1);
    final_params = params;
  });
  // p1 = 1 - 0.5 * 2 = 0; g1' = 4 + 0.25 * 16 * (0 - 1) = 0; p2 = 0 - 0.5 * 0 = 0.
  for (float p : final_params) EXPECT_EQ(p, 0.f);
}

}  // namespace
}  // namespace ranklab
