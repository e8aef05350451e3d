// ZeRO stages 1-3 with ranks as threads: bit for bit the ring's training, the bytes of one
// all-reduce as a reduce-scatter and an all-gather (stage 3: 1.5 times), and a memory ledger
// that holds the optimizer state (2: and the gradients; 3: and the parameters) in shards.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "engine/train/trainer.h"
#include "tests/support/thread_ranks.h"

namespace ranklab {
namespace {

using testing::trainWithThreads;

JobSpec zeroJob(int zero, int ranks, const std::string& optimizer) {
  JobSpec job;
  job.model.layers = {32, 16};
  job.train.epochs = 1;
  job.train.batch_size = 25;
  job.train.max_steps = 30;
  job.train.optimizer = choiceFrom<OptimizerKind>(optimizer);
  job.train.weight_decay = 0.01;
  job.parallel.ranks = ranks;
  job.parallel.zero = zero;
  return job;
}

// Each element is summed in the ring's order and updated by its owner as every rank's
// optimizer would update it: the same losses and evaluation, bit for bit.
TEST(Zero, EveryStageTrainsBitForBitLikeTheRing) {
  for (const char* optimizer : {"sgd", "adam", "adamw"}) {
    for (int ranks : {2, 3}) {
      const auto ring = trainWithThreads(zeroJob(0, ranks, optimizer));
      for (int zero : {1, 2, 3}) {
        const auto sharded = trainWithThreads(zeroJob(zero, ranks, optimizer));
        for (int r = 0; r < ranks; ++r) {
          ASSERT_EQ(sharded[r].losses, ring[r].losses)
              << optimizer << " zero " << zero << " rank " << r << "/" << ranks;
          EXPECT_EQ(sharded[r].evals.back().test_loss, ring[r].evals.back().test_loss)
              << optimizer << " zero " << zero << " rank " << r << "/" << ranks;
        }
      }
    }
  }
}

// Stage 1: one reduce-scatter after backward and one all-gather after the update; stage 2:
// one reduce-scatter per layer with parameters. Either moves what the ring's one
// all-reduce moves, byte for byte. Stage 3 all-gathers each layer before its forward and
// its backward: 1.5 times the bytes.
TEST(Zero, MovesTheBytesOfOneAllreduceAsReduceScatterAndAllGather) {
  const auto ring = trainWithThreads(zeroJob(0, 3, "sgd"));
  const int64_t layers = 3;  // Linear layers of 784-32-16-10
  for (int zero : {1, 2, 3}) {
    const auto sharded = trainWithThreads(zeroJob(zero, 3, "sgd"));
    for (size_t i = 0; i < ring[1].stats.size(); ++i) {
      const StepStats& z = sharded[1].stats[i];
      const StepStats& plain = ring[1].stats[i];
      EXPECT_EQ(plain.allreduces, 1);
      EXPECT_EQ(z.allreduces, 0);
      EXPECT_EQ(z.reduce_scatters, zero == 1 ? 1 : layers);
      EXPECT_EQ(z.all_gathers, zero == 3 ? 2 * layers : 1);
      const int64_t times = zero == 3 ? 3 : 2;  // halves of an all-reduce
      EXPECT_EQ(2 * z.bytes_tx, times * plain.bytes_tx) << "zero " << zero << " step " << z.step;
      EXPECT_EQ(2 * z.bytes_rx, times * plain.bytes_rx);
    }
  }
}

// The ledger (fp32, Adam, N data ranks, P parameters): ZeRO 0 holds 4P + 4P + 8P bytes of
// model states, ZeRO 1 4P + 4P + 8P/N, ZeRO 2 4P + 4P/N + 8P/N, ZeRO 3 4P/N + 4P/N + 8P/N,
// as the paper's formula; apart from them (the paper's temporary buffers) ZeRO 2 holds one
// scratch as large as the largest layer's gradients, ZeRO 3 that and one for its parameters.
TEST(Zero, MemoryLedgerShardsOptimizerStateAndGradients) {
  JobSpec job = zeroJob(0, 4, "adam");
  job.model.layers = {64, 64, 64};
  job.train.max_steps = 3;
  const int64_t params = (784 * 64 + 64) + 2 * (64 * 64 + 64) + (64 * 10 + 10);
  const int64_t largest = 784 * 64 + 64;  // the first layer's weights and bias
  const double n = 4;
  for (int zero : {0, 1, 2, 3}) {
    job.parallel.zero = zero;
    const auto ranks = trainWithThreads(job);
    int64_t optimizer_total = 0, grads_total = 0;
    for (const auto& rank : ranks) {
      const StepStats& s = rank.stats.back();
      if (zero == 3) {
        EXPECT_NEAR(static_cast<double>(s.mem_params) / 4, params / n, 1.0);
      } else {
        EXPECT_EQ(s.mem_params, 4 * params);
      }
      // Shards differ by at most one element.
      const double shard = static_cast<double>(s.mem_optimizer) / 8;
      if (zero == 0) {
        EXPECT_EQ(s.mem_optimizer, 8 * params);
      } else {
        EXPECT_NEAR(shard, params / n, 1.0);
      }
      if (zero >= 2) {
        EXPECT_NEAR(static_cast<double>(s.mem_grads) / 4, params / n, 1.0);
      } else {
        EXPECT_EQ(s.mem_grads, 4 * params);
      }
      const int64_t scratches = zero == 3 ? 2 : zero == 2 ? 1 : 0;
      EXPECT_EQ(s.mem_buffers, scratches * 4 * largest) << "zero " << zero;
      EXPECT_GT(s.mem_activations, 0);
      optimizer_total += s.mem_optimizer;
      grads_total += s.mem_grads;
    }
    // Every element's state is held exactly once across the ranks.
    if (zero > 0) {
      EXPECT_EQ(optimizer_total, 8 * params);
    }
    if (zero >= 2) {
      EXPECT_EQ(grads_total, 4 * params);
    }
    const StepStats& s = ranks[0].stats.back();
    const double total = static_cast<double>(s.mem_params + s.mem_grads + s.mem_optimizer);
    const double paper = 4.0 * params *
                         (zero == 0   ? 4
                          : zero == 1 ? 2 + 2 / n
                          : zero == 2 ? 1 + 3 / n
                                      : 4 / n);
    EXPECT_NEAR(total / paper, 1.0, 1e-4) << "zero " << zero;
    std::printf(
        "zero %d: %lld B params + %lld B grads + %lld B optimizer = %.4f of the paper's; "
        "+ %lld B scratch\n",
        zero, static_cast<long long>(s.mem_params), static_cast<long long>(s.mem_grads),
        static_cast<long long>(s.mem_optimizer), total / paper,
        static_cast<long long>(s.mem_buffers));
  }
}

}  // namespace
}  // namespace ranklab
