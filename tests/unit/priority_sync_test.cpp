// Priority-scheduled communication (engine/train/priority_sync.h): the same training as fifo
// buckets of the same size, pieces sent first layer first, and a forward that waits for its
// own layer's pieces alone.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

#include "comm/steady_clock.h"
#include "engine/train/priority_sync.h"
#include "engine/train/transport_choice.h"
#include "tests/support/guarded_device.h"
#include "tests/support/thread_ranks.h"
#include "tests/support/thread_world.h"

namespace ranklab {
namespace {

using testing::onEveryRank;
using testing::trainWithThreads;

JobSpec threeLayerJob(const std::string& optimizer) {
  JobSpec job;
  job.model.layers = {256, 128};  // 200,960 + 32,896 + 1,290 parameters
  job.train.epochs = 1;
  job.train.batch_size = 25;
  job.train.optimizer = choiceFrom<OptimizerKind>(optimizer);
  job.train.lr = optimizer == "sgd" ? 0.05 : 0.001;
  job.parallel.ranks = 3;
  return job;
}

TEST(PrioritySchedule, TrainsBitForBitLikeFifoBucketsOfTheSameSize) {
  for (const std::string optimizer : {"sgd", "adam"}) {
    auto job = threeLayerJob(optimizer);
    job.parallel.bucket_kb = 16;
    const auto fifo = trainWithThreads(job);
    job.parallel.bucket_kb = 0;
    job.parallel.comm_schedule = CommSchedule::kPriority;
    job.parallel.partition_kb = 16;
    const auto priority = trainWithThreads(job);
    ASSERT_EQ(priority[0].losses.size(), fifo[0].losses.size());
    // The same pieces, the same sums, the same updates: only their order differs.
    for (int r = 0; r < 3; ++r) EXPECT_EQ(priority[r].losses, fifo[r].losses) << optimizer;
    EXPECT_EQ(priority[0].evals.back().test_accuracy, fifo[0].evals.back().test_accuracy);
    int64_t fifo_bytes = 0, priority_bytes = 0;
    for (const auto& s : fifo[0].stats) fifo_bytes += s.bytes_tx;
    for (const auto& s : priority[0].stats) {
      priority_bytes += s.bytes_tx;
      EXPECT_LE(s.comm_hidden_ns, s.comm_ns);
    }
    EXPECT_EQ(priority_bytes, fifo_bytes) << "every piece's bytes are in some step's record";
  }
}

// On a device whose memory the host may not touch, as a GPU's (tests/support/guarded_device.h):
// pieces are reduced on host copies and each goes back up and is updated on the device as
// it arrives, on the communication thread; the run is the CPU's bit for bit.
TEST(PrioritySchedule, PiecesOffTheHostAreUpdatedOnTheDeviceBitForBit) {
  testing::registerGuardedDevices();
  for (const std::string optimizer : {"adam"}) {
    auto cpu = threeLayerJob(optimizer);
    cpu.train.max_steps = 12;
    cpu.parallel.comm_schedule = CommSchedule::kPriority;
    cpu.parallel.partition_kb = 64;
    auto off = cpu;
    off.train.device = "guarded";
    off.parallel.device_collectives = DeviceCollectives::kHost;
    const auto want = trainWithThreads(cpu);
    const auto got = trainWithThreads(off);
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(got[r].losses, want[r].losses) << optimizer << " rank " << r;
      EXPECT_EQ(got[r].evals.back().test_loss, want[r].evals.back().test_loss) << optimizer;
    }
    // A piece's bytes count in the step whose window it ends in: compare the whole run's.
    int64_t want_bytes = 0, got_bytes = 0;
    for (const auto& s : want[0].stats) want_bytes += s.bytes_tx;
    for (const auto& s : got[0].stats) got_bytes += s.bytes_tx;
    EXPECT_EQ(got_bytes, want_bytes) << optimizer;
  }
}

constexpr size_t kPieceFloats = 256, kPieces = 10;

TEST(PrioritySync, SendsTheFirstLayersPiecesFirst) {
  std::vector<std::vector<int>> orders(2);
  onEveryRank(2, [&](Communicator& comm) {
    PrioritySync sync(makeHostTransport(comm), AllreduceChoice("ring"),
                      kPieceFloats * sizeof(float), 0);
    std::vector<float> params(kPieceFloats * kPieces, 1.f), grads(params.size(), 1.f);
    sync.start(params.data(), params.size());
    sync.beginStep(0.1);
    // Backward announces the last piece only; the rest are ready at sync().
    sync.gradientReady(grads.data(), params.size() - kPieceFloats, kPieceFloats);
    sync.sync(grads.data(), grads.size());
    sync.settle();
    sync.beginStep(0.1);
    orders[comm.rank()] = sync.lastOrder();
  });
  // Piece 0 is the gradient's end, announced first; then the rest from the first layer's.
  const std::vector<int> expected = {0, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_EQ(orders[0], expected);
  EXPECT_EQ(orders[1], expected);
}

// Backward finishes the last two pieces together. With a credit of one piece only the
// earlier of them is handed over; the other waits and is overtaken by every piece after it.
// With a credit of the whole gradient both go at once.
TEST(PrioritySync, TheCreditWindowDecidesWhatCanBeOvertaken) {
  for (const size_t credit_pieces : {size_t{1}, kPieces}) {
    std::vector<std::vector<int>> orders(2);
    onEveryRank(2, [&](Communicator& comm) {
      PrioritySync sync(makeHostTransport(comm), AllreduceChoice("ring"),
                        kPieceFloats * sizeof(float), credit_pieces * kPieceFloats * sizeof(float));
      std::vector<float> params(kPieceFloats * kPieces, 1.f), grads(params.size(), 1.f);
      sync.start(params.data(), params.size());
      sync.beginStep(0.1);
      sync.gradientReady(grads.data(), params.size() - 2 * kPieceFloats, 2 * kPieceFloats);
      sync.sync(grads.data(), grads.size());
      sync.settle();
      sync.beginStep(0.1);
      orders[comm.rank()] = sync.lastOrder();
    });
    const std::vector<int> expected = credit_pieces == 1
                                          ? std::vector<int>{1, 9, 8, 7, 6, 5, 4, 3, 2, 0}
                                          : std::vector<int>{1, 0, 9, 8, 7, 6, 5, 4, 3, 2};
    EXPECT_EQ(orders[0], expected) << "credit " << credit_pieces << " pieces";
    EXPECT_EQ(orders[1], expected) << "every rank runs the same order";
  }
}

TEST(PrioritySync, AForwardWaitsForItsOwnLayersPiecesAlone) {
  constexpr int kSlowMs = 1000;
  std::vector<int64_t> first_wait_ms(2), settle_wait_ms(2);
  std::vector<int> end_updated_before_first(2, -1);
  onEveryRank(2, [&](Communicator& comm) {
    PrioritySync sync(makeHostTransport(comm), AllreduceChoice("ring"),
                      kPieceFloats * sizeof(float), 0);
    std::vector<float> params(kPieceFloats * kPieces, 1.f), grads(params.size(), 2.f);
    std::atomic<bool> end_updated{false};
    const size_t end_piece = params.size() - kPieceFloats;
    sync.setPieceUpdate([&](const float* g, ParamRange piece, double lr, bool) {
      // The gradient's last piece goes last, and slowly.
      if (piece.begin == end_piece) std::this_thread::sleep_for(std::chrono::milliseconds(kSlowMs));
      for (size_t i = piece.begin; i < piece.end; ++i) params[i] -= float(lr) * g[i];
      if (piece.begin == end_piece) end_updated = true;
    });
    sync.start(params.data(), params.size());
    sync.beginStep(0.5);
    sync.sync(grads.data(), grads.size());
    int64_t t = steadyNowNs();
    sync.awaitParameters(0, kPieceFloats);  // the first layer's forward
    first_wait_ms[comm.rank()] = (steadyNowNs() - t) / 1'000'000;
    end_updated_before_first[comm.rank()] = end_updated;
    EXPECT_EQ(params[0], 0.f) << "the first piece was updated: 1 - 0.5 * 2";
    t = steadyNowNs();
    const SyncStats tail = sync.settle();
    settle_wait_ms[comm.rank()] = (steadyNowNs() - t) / 1'000'000;
    EXPECT_TRUE(end_updated);
    EXPECT_EQ(params.back(), 0.f);
    EXPECT_GE(tail.wait_ns, int64_t{kSlowMs / 2} * 1'000'000);
  });
  for (int r = 0; r < 2; ++r) {
    std::printf("rank %d: first layer waited %lld ms, the rest %lld ms\n", r,
                static_cast<long long>(first_wait_ms[r]),
                static_cast<long long>(settle_wait_ms[r]));
    EXPECT_EQ(end_updated_before_first[r], 0) << "the first layer did not wait for the last";
    EXPECT_GE(settle_wait_ms[r], kSlowMs / 2);
  }
}

}  // namespace
}  // namespace ranklab
