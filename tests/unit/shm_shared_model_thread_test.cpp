// The shared model of parallel.algorithm "shm-sharded" with ranks as threads: one shared
// block for the parameters, the own-chunk sum closed-form exact and bit-identical to the
// shm all-reduce, chunks tiling the buffer, and the error when ranks do not share a host.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/collectives/shm_allreduce.h"
#include "comm/collectives/shm_shared_model.h"
#include "comm/memory/thread_communicator.h"
#include "tests/support/random_floats.h"
#include "tests/support/shared_model_reduce.h"
#include "tests/support/thread_world.h"

namespace ranklab {
namespace {

using testing::onEveryRank;

TEST(SharedBlock, EveryRankMapsTheOneBlock) {
  onEveryRank(4, [](Communicator& comm) {
    auto block = comm.allocateSharedBlock(5);
    ASSERT_NE(block, nullptr);
    if (comm.rank() == 0)
      for (int i = 0; i < 5; ++i) block->slot(0)[i] = static_cast<float>(i + 1);
    block->fence();
    for (int r = 0; r < comm.size(); ++r) EXPECT_EQ(block->slot(r), block->slot(0));
    EXPECT_EQ(block->slot(comm.rank())[4], 5.f);
  });
  onEveryRank(
      4, [](Communicator& comm) { EXPECT_EQ(comm.allocateSharedBlock(8), nullptr); }, 2);
}

TEST(ShmSharedModel, ChunksTileTheBufferOnCacheLines) {
  for (size_t count : {0, 1, 15, 16, 17, 1031, 235146})
    for (int parts = 1; parts <= 8; ++parts) testing::expectChunksTile(count, parts);
}

// Worlds 1..8, sizes 0, 1, odd and large: the own chunk holds the closed-form sum.
TEST(ShmSharedModel, OwnChunkHoldsTheSumExactly) {
  for (int world = 1; world <= 8; ++world) {
    onEveryRank(world, [world](Communicator& comm) {
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{100003}}) {
        ShmSharedModel model(comm, count);
        std::vector<float> mine(count);
        for (size_t i = 0; i < count; ++i) mine[i] = static_cast<float>(comm.rank() + i % 5);
        const auto slot = testing::reduceInSharedModel(model, mine, 1.f);
        const Chunk own = model.ownChunk();
        for (size_t i = 0; i < count; ++i) {
          const bool in_own = i >= own.begin && i < own.begin + own.len;
          const float sum = world * (world - 1) / 2 + world * static_cast<float>(i % 5);
          ASSERT_EQ(slot[i], in_own ? sum : mine[i])
              << "world " << world << " count " << count << " index " << i;
        }
      }
    });
  }
}

// Random floats, scaled to the mean: the bits the shm all-reduce gives.
TEST(ShmSharedModel, MeanMatchesTheShmAllreduceBitForBit) {
  constexpr size_t kCount = 100003;
  for (int world : {2, 3, 5}) {
    onEveryRank(world, [world](Communicator& comm) {
      const auto mine = testing::normalFloats(91 + comm.rank(), kCount);
      auto expected = mine;
      ShmAllreduce(comm).run(expected.data(), kCount, 1.f / world);
      ShmSharedModel model(comm, kCount);
      const auto slot = testing::reduceInSharedModel(model, mine, 1.f / world);
      const Chunk own = model.ownChunk();
      for (size_t i = own.begin; i < own.begin + own.len; ++i)
        ASSERT_EQ(slot[i], expected[i]) << "world " << world << " index " << i;
      EXPECT_EQ(model.bytesMoved(),
                static_cast<int64_t>((kCount + (world - 2) * own.len) * sizeof(float)));
    });
  }
}

TEST(ShmSharedModel, RanksOnSeveralHostsGetAnErrorNamingTheKey) {
  onEveryRank(
      4,
      [](Communicator& comm) {
        try {
          ShmSharedModel model(comm, 10);
          FAIL() << "expected an error";
        } catch (const std::invalid_argument& e) {
          const std::string text = e.what();
          EXPECT_NE(text.find("parallel.algorithm \"shm-sharded\""), std::string::npos) << text;
          EXPECT_NE(text.find("ring, mpi or hierarchical"), std::string::npos) << text;
        }
      },
      2);
}

}  // namespace
}  // namespace ranklab
