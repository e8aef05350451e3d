// The training strategies with ranks (and parameter servers) as threads: each is checked
// against plain synchronous all-reduce where the mathematics says they must agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "engine/train/trainer.h"
#include "tests/support/thread_ranks.h"

namespace ranklab {
namespace {

using testing::largestGap;
using testing::trainWithThreads;

JobSpec smallJob(const std::string& strategy, int ranks = 2) {
  JobSpec job;
  job.model.layers = {32};
  job.train.epochs = 1;
  job.train.batch_size = 25;
  job.parallel.ranks = ranks;
  job.parallel.strategy = strategy;
  return job;
}

TEST(Strategies, PsSyncFollowsAllreduce) {
  // The server applies the same optimizer to the same mean gradient; only the order of
  // float additions differs.
  const auto sync = trainWithThreads(smallJob("allreduce", 3));
  auto job = smallJob("ps-sync", 3);
  job.parallel.servers = 2;
  const auto ps = trainWithThreads(job);
  ASSERT_EQ(ps.size(), 5u);
  const double gap = largestGap(ps[0].losses, sync[0].losses);
  std::printf("ps-sync vs allreduce: largest relative loss gap %.3g\n", gap);
  EXPECT_LT(gap, 1e-3);
  EXPECT_NEAR(ps[0].evals.back().test_accuracy, sync[0].evals.back().test_accuracy, 0.01);
  // Both servers reported their shard; together they saw every push.
  int64_t pushes = 0;
  for (int server : {3, 4}) {
    ASSERT_FALSE(ps[server].loads.empty());
    for (const auto& load : ps[server].loads) pushes += load.pushes;
  }
  EXPECT_EQ(pushes, 2 * 3 * static_cast<int64_t>(ps[0].losses.size()));
}

// Three workers' pushes reach a server in whatever order the threads run, and three floats
// add differently in another order: the server sums them in worker order, so the run
// repeats itself (before it did, 5 of 5 pairs of such runs differed).
TEST(Strategies, PsSyncWithThreeWorkersRepeatsItselfBitForBit) {
  auto job = smallJob("ps-sync", 3);
  job.train.max_steps = 12;
  const auto first = trainWithThreads(job);
  for (int again = 0; again < 3; ++again) {
    const auto next = trainWithThreads(job);
    for (int r = 0; r < 3; ++r) EXPECT_EQ(next[r].losses, first[r].losses) << "rank " << r;
  }
}

TEST(Strategies, LocalSgdAveragingEveryStepEqualsAllreduce) {
  // SGD with momentum is linear in the gradient: averaging the models after every local
  // step is averaging the gradients before it.
  auto job = smallJob("local-sgd");
  job.parallel.average_every = 1;
  const auto local = trainWithThreads(job);
  const auto sync = trainWithThreads(smallJob("allreduce"));
  const double gap = largestGap(local[1].losses, sync[1].losses);
  std::printf("local-sgd every 1 vs allreduce: largest relative loss gap %.3g\n", gap);
  EXPECT_LT(gap, 1e-3);
}

TEST(Strategies, LocalSgdAveragesOnlyEveryKSteps) {
  auto job = smallJob("local-sgd");
  job.parallel.average_every = 5;
  const auto ranks = trainWithThreads(job);
  for (const auto& s : ranks[0].stats) {
    const bool averages = s.step % 5 == 0;
    EXPECT_EQ(s.bytes_tx > 0, averages) << "step " << s.step;
  }
  // Evaluated after a final average: every rank scores the same model.
  EXPECT_EQ(ranks[0].evals.back().test_accuracy, ranks[1].evals.back().test_accuracy);
}

TEST(Strategies, PsAsyncTrainsAndReportsStaleness) {
  auto job = smallJob("ps-async", 3);
  // Three epochs, not one: after one, a TSan run's scheduling once left 0.27 (CI, 2026-11-27).
  job.train.epochs = 3;
  const auto ranks = trainWithThreads(job);
  int64_t stale = 0;
  for (int r = 0; r < 3; ++r)
    for (const auto& s : ranks[r].stats) stale += s.staleness;
  std::printf("ps-async, 3 workers: mean staleness %.2f, accuracy %.3f\n",
              static_cast<double>(stale) / (3 * ranks[0].stats.size()),
              ranks[0].evals.back().test_accuracy);
  // Well above chance (0.1) at its best epoch. How stale the pushes are follows the threads'
  // scheduling, so the accuracy does too: 0.55-0.76 after three epochs here (6 runs on one
  // core together); an epoch that a burst of stale pushes set back must not decide it.
  double best = 0;
  for (const auto& e : ranks[0].evals) best = std::max(best, e.test_accuracy);
  EXPECT_GT(best, 0.3);
  EXPECT_EQ(ranks[0].evals.back().test_accuracy, ranks[2].evals.back().test_accuracy)
      << "workers pull the same model before evaluating";
}

TEST(Strategies, BucketedAllreduceHidesCommunicationBehindBackward) {
  auto job = smallJob("allreduce");
  job.model.layers = {256, 128};  // three parameterized layers: three buckets at 64 KiB
  job.parallel.bucket_kb = 64;
  const auto bucketed = trainWithThreads(job);
  job.parallel.bucket_kb = 0;
  const auto whole = trainWithThreads(job);
  const double gap = largestGap(bucketed[0].losses, whole[0].losses);
  int64_t hidden = 0, comm = 0;
  for (const auto& s : bucketed[0].stats) {
    hidden += s.comm_hidden_ns;
    comm += s.comm_ns;
    EXPECT_LE(s.comm_hidden_ns, s.comm_ns);
  }
  std::printf("bucketed: %.1f%% of communication hidden behind backward; loss gap %.3g\n",
              100.0 * hidden / std::max<int64_t>(comm, 1), gap);
  EXPECT_LT(gap, 1e-3);
  EXPECT_GT(hidden, 0) << "the last layers' buckets move while the first layers differentiate";
  for (const auto& s : whole[0].stats) EXPECT_EQ(s.comm_hidden_ns, 0);
}

TEST(Strategies, HierarchicalAllreduceTrainsLikeRing) {
  auto job = smallJob("allreduce", 4);
  const auto ring = trainWithThreads(job);
  job.parallel.algorithm = "hierarchical";
  job.parallel.ranks_per_host = 2;
  const auto hier = trainWithThreads(job);
  EXPECT_LT(largestGap(hier[3].losses, ring[3].losses), 1e-3);
}

TEST(Strategies, ShmTrainsBitForBitLikeRingOnTwoRanks) {
  // Two addends: the ring's a1 + a0 and shm's a0 + a1 are the same float.
  auto job = smallJob("allreduce", 2);
  const auto ring = trainWithThreads(job);
  job.parallel.algorithm = "shm";
  const auto shm = trainWithThreads(job);
  EXPECT_EQ(shm[0].losses, ring[0].losses);
  EXPECT_EQ(shm[1].losses, ring[1].losses);
}

// The sharded update over one shared model sums in shm's order and updates each element
// as the full optimizer would: every rank trains bit for bit as under shm (and, at two
// ranks, the ring), with SGD momentum, AdamW and under AMP.
TEST(Strategies, ShmShardedTrainsBitForBitLikeShm) {
  for (const char* optimizer : {"sgd", "adamw"}) {
    for (int ranks : {2, 3}) {
      auto job = smallJob("allreduce", ranks);
      job.train.optimizer = choiceFrom<OptimizerKind>(optimizer);
      job.train.weight_decay = 0.01;
      job.parallel.algorithm = "shm";
      const auto shm = trainWithThreads(job);
      job.parallel.algorithm = "shm-sharded";
      const auto sharded = trainWithThreads(job);
      for (int r = 0; r < ranks; ++r) {
        EXPECT_EQ(sharded[r].losses, shm[r].losses) << optimizer << " rank " << r << "/" << ranks;
        EXPECT_EQ(sharded[r].evals.back().test_loss, shm[r].evals.back().test_loss);
      }
      if (ranks == 2) {
        job.parallel.algorithm = "ring";
        EXPECT_EQ(sharded[1].losses, trainWithThreads(job)[1].losses) << optimizer;
      }
      int64_t bytes = 0;
      for (const auto& s : sharded[0].stats) bytes += s.bytes_tx;
      for (const auto& s : shm[0].stats) bytes -= s.bytes_tx;
      EXPECT_LE(std::abs(bytes), 64 * static_cast<int64_t>(shm[0].stats.size()))
          << "bytes counted as shm counts them";
    }
  }
  auto job = smallJob("allreduce", 2);
  job.amp.dtype = AmpDtype::kFp16;
  job.amp.growth_interval = 5;
  job.parallel.algorithm = "shm";
  const auto shm = trainWithThreads(job);
  job.parallel.algorithm = "shm-sharded";
  const auto sharded = trainWithThreads(job);
  EXPECT_EQ(sharded[0].losses, shm[0].losses) << "fp16";
  int overflows = 0;
  for (const auto& s : sharded[0].stats) overflows += s.overflow;
  std::printf("shm-sharded fp16: %d overflow skips\n", overflows);
}

// shm's own first barrier is the step's wait: a straggler shows up as the other rank's
// wait, not as communication, whole-gradient or bucketed (bucket_kb -1 below: shm-sharded,
// whose first fence is the wait). Summed over steps 2..4, against the same run without the
// straggler, so a slow build's (TSan's) own communication time does not count as leaked delay.
TEST(Strategies, ShmCountsTheStragglerAsWait) {
  constexpr int kDelayMs = 150;
  constexpr int64_t kDelayNs = 3 * kDelayMs * 1'000'000LL;
  const auto waitAndComm = [](const JobSpec& job) {
    const auto runs = trainWithThreads(job);
    EXPECT_EQ(runs[0].stats.size(), 4u);
    // Bucketed, rank 0 meets the sleep of step k in step k + 1's first bucket.
    std::pair<int64_t, int64_t> sums{0, 0};
    for (const auto& s : runs[0].stats) {
      if (s.step == 1) continue;
      sums.first += s.wait_ns;
      sums.second += s.comm_ns;
    }
    return sums;
  };
  for (int bucket_kb : {0, 64, -1}) {
    auto job = smallJob("allreduce", 2);
    job.model.layers = {256, 128};
    job.parallel.algorithm = bucket_kb < 0 ? "shm-sharded" : "shm";
    job.parallel.bucket_kb = std::max(bucket_kb, 0);
    job.train.max_steps = 4;
    const auto alone = waitAndComm(job);
    job.fault.straggler_rank = 1;
    job.fault.straggler_delay_ms = kDelayMs;
    const auto straggled = waitAndComm(job);
    EXPECT_GE(straggled.first, kDelayNs * 6 / 10) << "bucket_kb " << bucket_kb;
    EXPECT_LT(straggled.second - alone.second, kDelayNs / 3)
        << "bucket_kb " << bucket_kb << ": comm " << straggled.second << " ns, " << alone.second
        << " ns without the straggler";
  }
}

}  // namespace
}  // namespace ranklab
