// All-reduce algorithms with ranks as threads over the in-memory transport: closed-form
// sums for worlds 1..16 and sizes 0, 1, odd and large (shm: shm_allreduce_thread_test.cpp
// too).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "comm/collectives/allreduce_registry.h"
#include "comm/collectives/hierarchical_allreduce.h"
#include "comm/collectives/ring_allreduce.h"
#include "comm/memory/thread_communicator.h"
#include "tests/support/random_floats.h"
#include "tests/support/thread_world.h"

namespace ranklab {
namespace {

// Rank r fills element i with r + i % 7; the sum is n(n-1)/2 + n * (i % 7).
float expected(int world, size_t i) {
  return static_cast<float>(world * (world - 1) / 2 + world * static_cast<int>(i % 7));
}

void runWorld(int world, size_t count, size_t segment, const std::string& algorithm,
              int ranks_per_host = 0) {
  ThreadRendezvous rendezvous(world, ranks_per_host);
  std::vector<std::vector<float>> buffers(world);
  std::vector<int64_t> sent(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(rendezvous, r);
      auto& data = buffers[r];
      data.resize(count);
      for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>(r + i % 7);
      if (algorithm == "ring-segmented") {
        RingAllreduce ring(comm, segment);
        ring.run(data.data(), count);
        sent[r] = ring.bytesSent();
      } else {
        auto reduce = makeAllreduce(algorithm, comm, {ranks_per_host});
        reduce->run(data.data(), count);
        sent[r] = reduce->bytesSent();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) {
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(buffers[r][i], expected(world, i))
          << "world " << world << " count " << count << " rank " << r << " index " << i;
    }
  }
  // "ring-segmented" is the ring with its own segment size; the rest send what their
  // entry's formula says: every rank for an even share, the busiest (rank 0: a naive root,
  // a hierarchical leader) otherwise, since a short last host's leader sends less.
  const AllreduceAlgorithm& entry =
      *findAllreduce(algorithm == "ring-segmented" ? "ring" : algorithm);
  if (world == 1 || count < static_cast<size_t>(world)) return;
  const double bytes = static_cast<double>(count * sizeof(float));
  for (int r = 0; r < (entry.even_share ? world : 1); ++r) {
    const double formula = entry.bytes_sent(r, world, ranks_per_host, bytes);
    // Chunks round to whole floats (shm: in each of its pieces, a rank up to 0.015 %).
    const double slack = std::max(2.0 * world * sizeof(float), 2e-4 * formula);
    EXPECT_NEAR(static_cast<double>(sent[r]), formula, slack) << entry.name << " rank " << r;
  }
}

class RingThreads : public ::testing::TestWithParam<int> {};

// Every registered algorithm, swept from the registry (a new one is tested without being
// named here): every size sums, and sends what its formula says.
TEST_P(RingThreads, EveryRegisteredAlgorithmSumsEverySize) {
  for (const auto& a : allreduceRegistry()) {
    SCOPED_TRACE(a.name);
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1001}, size_t{100003}})
      runWorld(GetParam(), count, 0, a.name);
  }
}

TEST_P(RingThreads, SegmentedChunksStillPairUp) {
  // Segments smaller than a chunk and not dividing it: sends and receives must stay paired.
  for (size_t count : {size_t{5}, size_t{97}, size_t{1031}}) {
    runWorld(GetParam(), count, 3, "ring-segmented");
  }
}

TEST_P(RingThreads, HierarchicalOverEveryHostLayout) {
  // Hosts of 2 and 3 ranks (the last one short), and one rank per host.
  for (int per_host : {2, 3, 1}) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{100003}}) {
      runWorld(GetParam(), count, 0, "hierarchical", per_host);
    }
  }
}

// Rank 0 receives every other rank's buffer and sends the sum back to each: (n-1)x the
// buffer each way there, once on every other rank.
TEST_P(RingThreads, NaiveSendsEverythingThroughRankZero) {
  const int world = GetParam();
  ThreadRendezvous rendezvous(world);
  std::vector<int64_t> sent(world), received(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(rendezvous, r);
      auto reduce = makeAllreduce("naive", comm, {});
      std::vector<float> data(1000, 1.f);
      reduce->run(data.data(), data.size());
      sent[r] = reduce->bytesSent();
      received[r] = reduce->bytesReceived();
    });
  }
  for (auto& t : threads) t.join();
  const int64_t full = 1000 * sizeof(float);
  EXPECT_EQ(sent[0], (world - 1) * full);
  EXPECT_EQ(received[0], (world - 1) * full);
  for (int r = 1; r < world; ++r) {
    EXPECT_EQ(sent[r], full) << "rank " << r;
    EXPECT_EQ(received[r], full) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, RingThreads, ::testing::Range(1, 17));

TEST(Hierarchical, LeadersCrossHostsAndOthersStayInside) {
  // 6 ranks as 3 hosts of 2: only leaders (even ranks) run the ring between hosts.
  constexpr int kWorld = 6;
  constexpr size_t kCount = 6000;
  ThreadRendezvous rendezvous(kWorld, 2);
  std::vector<int64_t> sent(kWorld);
  std::vector<int> hosts(kWorld);
  std::vector<std::thread> threads;
  for (int r = 0; r < kWorld; ++r) {
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(rendezvous, r);
      HierarchicalAllreduce reduce(comm, 2);
      std::vector<float> data(kCount, 1.f);
      reduce.run(data.data(), kCount);
      sent[r] = reduce.bytesSent();
      hosts[r] = reduce.hosts();
    });
  }
  for (auto& t : threads) t.join();
  const int64_t full = kCount * sizeof(float);
  for (int r = 0; r < kWorld; ++r) {
    EXPECT_EQ(hosts[r], 3);
    // Inside a host of 2 the shared-memory all-reduce passes 2(2-1)/2 of the buffer each
    // way; a leader adds the ring's share 2(h-1)/h and the broadcast to its follower.
    const int64_t expected = r % 2 ? full : full + full * 2 * 2 / 3 + full;
    EXPECT_EQ(sent[r], expected) << "rank " << r;
  }
}

// The hops a traced ring records: 2(n-1) per run, rank r sending chunk r - s in
// reduce-scatter step s and r + 1 - s in all-gather step s, to rank r + 1, adding up to
// the bytes the run sent; after traceInto(nullptr) nothing more.
TEST(RingTrace, EveryHopNamesItsChunkPeerAndBytes) {
  const int world = 4;
  const size_t count = 1001;  // uneven chunks: 251, 250, 250, 250 floats
  ThreadRendezvous rendezvous(world);
  std::vector<CommSpans> hops(world);
  std::vector<int64_t> sent(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(rendezvous, r);
      std::vector<float> data(count, 1.f);
      auto reduce = makeAllreduce("ring", comm, {});
      reduce->traceInto(&hops[r]);
      reduce->run(data.data(), count);
      sent[r] = reduce->bytesSent();
      reduce->traceInto(nullptr);
      reduce->run(data.data(), count);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) {
    ASSERT_EQ(hops[r].size(), size_t(2 * (world - 1))) << "rank " << r;
    int64_t bytes = 0;
    for (int s = 0; s < 2 * (world - 1); ++s) {
      const CommSpan& hop = hops[r][size_t(s)];
      const bool scatter = s < world - 1;
      const int chunk = ((scatter ? r - s : r + 1 - (s - world + 1)) % world + world) % world;
      EXPECT_STREQ(hop.kind, scatter ? "ring-rs" : "ring-ag") << "rank " << r << " hop " << s;
      EXPECT_EQ(hop.part, s);
      EXPECT_EQ(hop.peer, (r + 1) % world);
      EXPECT_EQ(hop.chunk, chunk) << "rank " << r << " hop " << s;
      EXPECT_EQ(hop.bytes, int64_t((chunk == 0 ? 251 : 250) * sizeof(float)));
      EXPECT_LE(hop.begin_ns, hop.end_ns);
      bytes += hop.bytes;
    }
    EXPECT_EQ(bytes, sent[r]);
  }
}

// Every path sums each chunk in the ring's order (chunk c: rank c first, then c + 1, ...):
// on either side of the gather bound, past the pairwise bound (3 ranks), on 2 ranks (no
// pairwise path) and past kGatherWorld ranks, every rank gets the bits of that serial sum,
// and says which path it took.
std::string expectedPath(int world, size_t count) {
  if (world > RingAllreduce::kGatherWorld) return "ring";
  if (count * (world - 1) <= RingAllreduce::kGatherFloats) return "gather";
  return world > 2 && count <= RingAllreduce::kPairwiseFloats ? "pairwise" : "ring";
}

void expectRingOrderBits(int world, size_t count) {
  std::vector<std::vector<float>> in(world);
  for (int r = 0; r < world; ++r) in[r] = testing::normalFloats(31 * world + r, count);
  std::vector<float> want(count);
  for (int c = 0; c < world; ++c) {
    const Chunk piece = evenChunk(count, world, c);
    for (size_t i = piece.begin; i < piece.begin + piece.len; ++i) {
      float acc = in[c][i];
      for (int k = 1; k < world; ++k) acc += in[(c + k) % world][i];
      want[i] = acc;
    }
  }
  testing::onEveryRank(world, [&](Communicator& comm) {
    RingAllreduce ring(comm);
    EXPECT_EQ(ring.pathFor(count), expectedPath(world, count)) << world << " " << count;
    std::vector<float> data = in[comm.rank()];
    ring.run(data.data(), count);
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(data[i], want[i]) << "world " << world << " count " << count << " rank "
                                  << comm.rank() << " index " << i;
  });
}

TEST(RingPaths, EveryPathGivesTheRingsBits) {
  for (int world = 2; world <= RingAllreduce::kGatherWorld + 1; ++world) {
    const size_t bound = RingAllreduce::kGatherFloats / (world - 1);
    for (size_t count : {size_t{1}, size_t{5}, bound, bound + 1, 3 * bound + 7})
      expectRingOrderBits(world, count);
  }
  expectRingOrderBits(3, RingAllreduce::kPairwiseFloats + 1);
}

TEST(Allreduce, UnknownAlgorithmNamesTheAllowedOnes) {
  ThreadRendezvous rendezvous(1);
  ThreadCommunicator comm(rendezvous, 0);
  try {
    makeAllreduce("tree", comm);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ring, mpi, hierarchical"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ranklab
