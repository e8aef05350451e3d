// Run under mpirun: our collectives against MPI_Allreduce on real ranks, and the MPI
// backend's point-to-point, probe and split.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/collectives/allreduce_registry.h"
#include "comm/collectives/shm_allreduce.h"
#include "comm/collectives/shm_shared_model.h"
#include "comm/mpi/mpi_communicator.h"
#include "tests/support/random_floats.h"
#include "tests/support/shared_model_reduce.h"

namespace ranklab {
namespace {

const size_t kSizes[] = {0, 1, 7, 1000003};

// Integer-valued floats: every summation order gives the same bits.
std::vector<float> integerData(int rank, size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>((rank + 1) * (i % 101));
  return v;
}

std::vector<float> randomData(int rank, size_t count) {
  return testing::normalFloats(1234 + rank, count);
}

std::vector<float> mpiReference(std::vector<float> v) {
  MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_FLOAT, MPI_SUM,
                MPI_COMM_WORLD);
  return v;
}

// Every registered algorithm (a new one is swept without naming it here); those whose
// entry takes ranks_per_host also with hosts of 2 and of 3 ranks.
struct Variant {
  std::string algorithm;
  int ranks_per_host;
};
std::vector<Variant> allVariants() {
  std::vector<Variant> variants;
  for (const auto& a : allreduceRegistry()) {
    variants.push_back({a.name, 0});
    if (a.takes_ranks_per_host)
      for (int per_host : {2, 3}) variants.push_back({a.name, per_host});
  }
  return variants;
}
const std::vector<Variant> kVariants = allVariants();

// Sizes 0, 1, 7 and 1,000,003; exact on integer data.
TEST(CollectivesVersusMpi, ExactOnIntegerData) {
  MpiCommunicator comm;
  for (const auto& v : kVariants) {
    auto reduce = makeAllreduce(v.algorithm, comm, {v.ranks_per_host});
    for (size_t count : kSizes) {
      auto mine = integerData(comm.rank(), count);
      const auto reference = mpiReference(mine);
      reduce->run(mine.data(), count);
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(mine[i], reference[i])
            << v.algorithm << "/" << v.ranks_per_host << " size " << count << " index " << i;
      }
    }
  }
}

// Random floats: equal within float rounding of a sum of `world` terms; prints the largest gap.
TEST(CollectivesVersusMpi, CloseOnRandomData) {
  MpiCommunicator comm;
  for (const auto& v : kVariants) {
    const char* algorithm = v.algorithm.c_str();
    auto reduce = makeAllreduce(algorithm, comm, {v.ranks_per_host});
    for (size_t count : kSizes) {
      auto mine = randomData(comm.rank(), count);
      const auto reference = mpiReference(mine);
      reduce->run(mine.data(), count);
      double worst = 0;
      for (size_t i = 0; i < count; ++i)
        worst = std::max(worst, double(std::abs(mine[i] - reference[i])));
      if (comm.rank() == 0 && count > 1)
        std::printf("%s/%d world %d size %zu: largest |ours - MPI_Allreduce| = %.3g\n", algorithm,
                    v.ranks_per_host, comm.size(), count, worst);
      EXPECT_LE(worst, 1e-5 * comm.size()) << algorithm << " size " << count;
    }
  }
}

// Every rank ends with the same bits, or the model replicas would drift apart.
TEST(CollectivesVersusMpi, AllRanksAgreeBitwise) {
  MpiCommunicator comm;
  for (const auto& v : kVariants) {
    auto reduce = makeAllreduce(v.algorithm, comm, {v.ranks_per_host});
    auto mine = randomData(comm.rank(), 1000003);
    reduce->run(mine.data(), mine.size());
    std::vector<float> root = mine;
    MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
    EXPECT_EQ(0, std::memcmp(root.data(), mine.data(), mine.size() * sizeof(float)))
        << v.algorithm << "/" << v.ranks_per_host;
  }
}

// The MPI-3 shared window piece by piece (pieces not dividing the buffer), reused across
// sizes that make it grow, and small sizes meeting on flags between them: still
// MPI_Allreduce's sums.
TEST(CollectivesVersusMpi, SharedMemoryPiecesAndGrowth) {
  MpiCommunicator comm;
  ShmAllreduce reduce(comm, 4099);
  for (size_t count :
       {size_t{1}, size_t{4096}, size_t{4098}, size_t{4100}, size_t{1000003}, size_t{7}}) {
    auto mine = integerData(comm.rank(), count);
    const auto reference = mpiReference(mine);
    reduce.run(mine.data(), count);
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(mine[i], reference[i]) << count << " " << i;
  }
}

// shm-sharded's shared model in an MPI-3 window: the parameters one block every rank
// maps, and each rank's own chunk of the gradient sum exactly MPI_Allreduce's on integer
// data and shm's bits on random data, sizes 0, 1, 7 and 1,000,003.
TEST(CollectivesVersusMpi, SharedModelOwnChunk) {
  MpiCommunicator comm;
  for (size_t count : kSizes) {
    ShmSharedModel model(comm, count);
    if (comm.rank() == 0) std::fill(model.params(), model.params() + count, 3.f);
    model.publish();
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(model.params()[i], 3.f) << count << " " << i;
    const Chunk own = model.ownChunk();
    auto mine = integerData(comm.rank(), count);
    const auto reference = mpiReference(mine);
    auto slot = testing::reduceInSharedModel(model, mine, 1.f);
    for (size_t i = own.begin; i < own.begin + own.len; ++i)
      ASSERT_EQ(slot[i], reference[i]) << "size " << count << " index " << i;
    mine = randomData(comm.rank(), count);
    auto shm = mine;
    ShmAllreduce(comm).run(shm.data(), count, 1.f / comm.size());
    slot = testing::reduceInSharedModel(model, mine, 1.f / comm.size());
    for (size_t i = own.begin; i < own.begin + own.len; ++i)
      ASSERT_EQ(slot[i], shm[i]) << "size " << count << " index " << i;
  }
}

// Whether a message from `source` with `tag` arrives within `seconds` (polled).
bool arrivesWithin(int source, int tag, double seconds) {
  const double deadline = MPI_Wtime() + seconds;
  for (int flag = 0; MPI_Wtime() < deadline;) {
    MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    if (flag) return true;
  }
  return false;
}

// A rank unwinding from an error with a shared window alive must not wait in the window's
// collective free for ranks that go on (shm, shm-sharded: a checkpoint rank 0 could not
// write hung the run until the silence limit, and its error was never shown).
TEST(MpiBackend, UnwindingRankDoesNotWaitToFreeASharedWindow) {
  MpiCommunicator comm;
  if (comm.size() < 2) GTEST_SKIP() << "needs a second rank";
  constexpr int kTag = 0x5eed;
  if (comm.rank() == 0) {
    try {
      auto slots = comm.allocateSharedSlots(16);
      throw std::runtime_error("rank 0 fails");
    } catch (const std::runtime_error&) {
    }
    for (int r = 1; r < comm.size(); ++r) MPI_Send(nullptr, 0, MPI_BYTE, r, kTag, MPI_COMM_WORLD);
    return;
  }
  bool unwound = false;
  try {
    auto slots = comm.allocateSharedSlots(16);
    unwound = arrivesWithin(0, kTag, 10.0);
    // Rank 0 is stuck in the free: join it there, so the test ends.
    if (!unwound)
      slots.reset();
    else
      throw std::runtime_error("this rank fails too");
  } catch (const std::runtime_error&) {
  }
  MPI_Recv(nullptr, 0, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  EXPECT_TRUE(unwound) << "rank 0 waited 10 s in the shared window's free for this rank";
}

// Every rank sends its rank to rank 0, which takes them in arrival order via probe.
TEST(MpiBackend, ProbeAndPointToPoint) {
  MpiCommunicator comm;
  if (comm.rank() != 0) {
    std::vector<int> payload(comm.rank(), comm.rank());
    comm.send(payload.data(), payload.size() * sizeof(int), 0, tags::kBench);
  } else {
    int total = 0;
    for (int i = 1; i < comm.size(); ++i) {
      const MessageInfo info = comm.probe(Communicator::kAnySource, tags::kBench);
      ASSERT_EQ(info.bytes, info.source * sizeof(int));
      std::vector<int> payload(info.source);
      comm.recv(payload.data(), info.bytes, info.source, tags::kBench);
      for (int x : payload) total += x;
    }
    const int n = comm.size() - 1;
    EXPECT_EQ(total, n * (n + 1) * (2 * n + 1) / 6);
  }
  // Nothing of the next part may reach rank 0's probe loop above.
  comm.barrier();
  // Two receives from the same peer and tag match in post order, whatever the wait order.
  const int right = (comm.rank() + 1) % comm.size(),
            left = (comm.rank() + comm.size() - 1) % comm.size();
  int first = -1, second = -1;
  Ticket a = comm.irecv(&first, sizeof first, left, tags::kBench);
  Ticket b = comm.irecv(&second, sizeof second, left, tags::kBench);
  const int one = 1, two = 2;
  Ticket s1 = comm.isend(&one, sizeof one, right, tags::kBench);
  Ticket s2 = comm.isend(&two, sizeof two, right, tags::kBench);
  b->wait();
  a->wait();
  s1->wait();
  s2->wait();
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 2);
}

TEST(MpiBackend, SplitAndHostSplit) {
  MpiCommunicator comm;
  auto odd = comm.split(comm.rank() % 2 ? 0 : -1, comm.rank());
  EXPECT_EQ(odd != nullptr, comm.rank() % 2 == 1);
  if (odd) {
    EXPECT_EQ(odd->size(), comm.size() / 2);
    EXPECT_EQ(odd->rank(), comm.rank() / 2);
  }
  auto host = comm.splitByHost();
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->size(), comm.size()) << "one machine: every rank shares memory";
}

}  // namespace
}  // namespace ranklab
