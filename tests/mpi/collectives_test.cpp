// Run under mpirun: our collectives against MPI_Allreduce on real ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "comm/collectives/allreduce.h"
#include "comm/mpi/mpi_communicator.h"

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
  std::mt19937 rng(1234 + rank);
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> v(count);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<float> mpiReference(std::vector<float> v) {
  MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_FLOAT, MPI_SUM,
                MPI_COMM_WORLD);
  return v;
}

// Sizes 0, 1, 7 and 1,000,003; exact on integer data.
TEST(RingVersusMpi, ExactOnIntegerData) {
  MpiCommunicator comm;
  auto ring = makeAllreduce("ring", comm);
  for (size_t count : kSizes) {
    auto mine = integerData(comm.rank(), count);
    const auto reference = mpiReference(mine);
    ring->run(mine.data(), count);
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(mine[i], reference[i]) << "size " << count << " index " << i;
    }
  }
}

// Random floats: equal within float rounding of a sum of `world` terms; prints the largest gap.
TEST(RingVersusMpi, CloseOnRandomData) {
  MpiCommunicator comm;
  for (const char* algorithm : {"ring", "mpi"}) {
    auto reduce = makeAllreduce(algorithm, comm);
    for (size_t count : kSizes) {
      auto mine = randomData(comm.rank(), count);
      const auto reference = mpiReference(mine);
      reduce->run(mine.data(), count);
      double worst = 0;
      for (size_t i = 0; i < count; ++i)
        worst = std::max(worst, double(std::abs(mine[i] - reference[i])));
      if (comm.rank() == 0 && count > 1)
        std::printf("%s world %d size %zu: largest |ring - MPI_Allreduce| = %.3g\n", algorithm,
                    comm.size(), count, worst);
      EXPECT_LE(worst, 1e-5 * comm.size()) << algorithm << " size " << count;
    }
  }
}

// Every rank ends with the same bits, or the model replicas would drift apart.
TEST(RingVersusMpi, AllRanksAgreeBitwise) {
  MpiCommunicator comm;
  auto ring = makeAllreduce("ring", comm);
  auto mine = randomData(comm.rank(), 1000003);
  ring->run(mine.data(), mine.size());
  std::vector<float> root = mine;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
  EXPECT_EQ(0, std::memcmp(root.data(), mine.data(), mine.size() * sizeof(float)));
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  ranklab::MpiSession mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Only rank 0 prints; every rank's failure still fails the exit code.
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any_failed;
}
