// The shared-memory all-reduce with ranks as threads: the shared slots of the in-memory
// transport, piece by piece runs, bit-identical results in slot order, growth between
// runs, its own wait measurement, and the error when ranks do not share a host.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/collectives/allreduce_registry.h"
#include "comm/collectives/shm_allreduce.h"
#include "comm/memory/thread_communicator.h"
#include "tests/support/random_floats.h"
#include "tests/support/thread_world.h"

namespace ranklab {
namespace {

using testing::onEveryRank;

std::vector<float> randomData(int rank, size_t count) {
  return testing::normalFloats(77 + rank, count);
}

TEST(SharedSlots, EveryRankSeesEverySlotAfterAFence) {
  onEveryRank(5, [](Communicator& comm) {
    auto slots = comm.allocateSharedSlots(3);
    ASSERT_NE(slots, nullptr);
    EXPECT_EQ(slots->floatsPerSlot(), 3u);
    for (int i = 0; i < 3; ++i)
      slots->slot(comm.rank())[i] = static_cast<float>(comm.rank() * 10 + i);
    slots->fence();
    for (int r = 0; r < comm.size(); ++r) {
      // Own cache line per slot: no two ranks write the same 64 bytes.
      EXPECT_EQ(reinterpret_cast<uintptr_t>(slots->slot(r)) % 64, 0u);
      for (int i = 0; i < 3; ++i) EXPECT_EQ(slots->slot(r)[i], static_cast<float>(r * 10 + i));
    }
  });
}

TEST(SharedSlots, NoneWhenRanksSitOnSeveralHosts) {
  onEveryRank(
      4, [](Communicator& comm) { EXPECT_EQ(comm.allocateSharedSlots(8), nullptr); }, 2);
}

// Integer data through pieces smaller than the buffer and not dividing it, on reused slots.
TEST(ShmAllreduce, PiecesAndGrowthKeepSumsExact) {
  for (int world = 1; world <= 6; ++world) {
    onEveryRank(world, [world](Communicator& comm) {
      ShmAllreduce reduce(comm, 97, 0);  // every size through the chunked path
      for (size_t count : {size_t{5}, size_t{96}, size_t{98}, size_t{1031}, size_t{3}}) {
        std::vector<float> data(count);
        for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>(comm.rank() + i % 5);
        reduce.run(data.data(), count);
        for (size_t i = 0; i < count; ++i) {
          ASSERT_EQ(data[i], world * (world - 1) / 2 + world * static_cast<float>(i % 5))
              << "world " << world << " count " << count << " index " << i;
        }
      }
    });
  }
}

// Random floats: every rank gets the bits of the serial sum in slot order 0..n-1 (and of
// that sum scaled, for the mean).
TEST(ShmAllreduce, EveryRankGetsTheSlotOrderSumBitForBit) {
  constexpr int kWorld = 4;
  constexpr size_t kCount = 10007;
  std::vector<float> expected(kCount, 0.f);
  for (int r = 0; r < kWorld; ++r) {
    const auto v = randomData(r, kCount);
    for (size_t i = 0; i < kCount; ++i) expected[i] = r == 0 ? v[i] : expected[i] + v[i];
  }
  onEveryRank(kWorld, [&](Communicator& comm) {
    auto reduce = makeAllreduce("shm", comm);
    auto data = randomData(comm.rank(), kCount);
    reduce->run(data.data(), kCount);
    for (size_t i = 0; i < kCount; ++i)
      ASSERT_EQ(data[i], expected[i]) << "rank " << comm.rank() << " index " << i;
    // The mean, scaled inside the reduction: the bits of summing and then scaling.
    data = randomData(comm.rank(), kCount);
    reduce->runScaled(data.data(), kCount, 1.f / kWorld);
    for (size_t i = 0; i < kCount; ++i)
      ASSERT_EQ(data[i], expected[i] * (1.f / kWorld)) << "rank " << comm.rank() << " index " << i;
  });
}

// Small buffers meet on flags instead of barriers: the same slot-order bits as the chunked
// path on either side of the bound, scaled or not, over calls that alternate the two paths
// and the latency path's two halves (a rank writing a half its peers still read would show
// here, and to TSan).
TEST(ShmAllreduce, FlagsAndChunksGiveTheSameBitsCallAfterCall) {
  constexpr size_t kBound = ShmAllreduce::kLatencyFloats;
  const std::vector<size_t> counts = {1, kBound, 3, kBound + 1, 777, kBound, kBound + 1};
  for (int world : {2, 3, 5}) {
    onEveryRank(world, [&](Communicator& comm) {
      ShmAllreduce reduce(comm, 1000);
      for (size_t call = 0; call < 3 * counts.size(); ++call) {
        const size_t count = counts[call % counts.size()];
        const float scale = call % 2 ? 1.f / world : 1.f;
        EXPECT_STREQ(reduce.pathFor(count), count <= kBound ? "flags" : "chunked");
        std::vector<float> want(count);
        for (int r = 0; r < world; ++r) {
          const auto v = testing::normalFloats(1000 * call + r, count);
          for (size_t i = 0; i < count; ++i) want[i] = r == 0 ? v[i] : want[i] + v[i];
        }
        auto data = testing::normalFloats(1000 * call + comm.rank(), count);
        reduce.run(data.data(), count, scale);
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(data[i], scale == 1.f ? want[i] : want[i] * scale)
              << "world " << world << " call " << call << " index " << i;
      }
    });
  }
}

// The first meeting inside run() (the flags, or the chunked path's first barrier) is
// where the others wait for a late rank.
TEST(ShmAllreduce, ReportsTheWaitForALateRank) {
  constexpr auto kLate = std::chrono::milliseconds(60);
  for (size_t count : {size_t{1000}, ShmAllreduce::kLatencyFloats + 1}) {
    onEveryRank(3, [&](Communicator& comm) {
      auto reduce = makeAllreduce("shm", comm);
      EXPECT_TRUE(reduce->waitsForPeers());
      std::vector<float> data(count, 1.f);
      reduce->run(data.data(), data.size());  // sizes the slots (a collective of its own)
      std::fill(data.begin(), data.end(), 1.f);
      if (comm.rank() == 2) std::this_thread::sleep_for(kLate);
      reduce->run(data.data(), data.size());
      const SpanNs wait = reduce->lastWait();
      const int64_t waited = wait.end_ns - wait.begin_ns;
      if (comm.rank() == 2) {
        EXPECT_LT(waited, 40'000'000) << "the late rank itself hardly waits; " << count;
      } else {
        EXPECT_GE(waited, 40'000'000) << "rank " << comm.rank() << ", " << count;
      }
      EXPECT_EQ(data[count - 1], 3.f);
    });
  }
}

TEST(ShmAllreduce, RanksOnSeveralHostsGetAnErrorNamingTheChoices) {
  onEveryRank(
      4,
      [](Communicator& comm) {
        try {
          makeAllreduce("shm", comm);
          FAIL() << "expected an error";
        } catch (const std::invalid_argument& e) {
          const std::string text = e.what();
          EXPECT_NE(text.find("parallel.algorithm"), std::string::npos) << text;
          EXPECT_NE(text.find("ring, mpi or hierarchical"), std::string::npos) << text;
        }
      },
      2);
}

}  // namespace
}  // namespace ranklab
