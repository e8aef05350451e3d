// Run under mpirun: compressed all-reduces (and powersgd's sync) over real MPI ranks. Every rank
// must end with the same bits: the result is checked against rank 0's copy (MPI_Bcast) and, where
// the codec is exact on the data, against MPI_Allreduce.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <vector>

#include "comm/codecs/compressed_allreduce.h"
#include "comm/collectives/allreduce_registry.h"
#include "comm/mpi/mpi_communicator.h"
#include "engine/model/compute_device.h"
#include "engine/train/powersgd_sync.h"

namespace ranklab {
namespace {

constexpr size_t kCount = 100003;

std::vector<float> gradient(int rank) {
  std::vector<float> v(kCount);
  for (size_t i = 0; i < kCount; ++i) v[i] = std::sin(0.001f * i * (rank + 1)) * 0.01f;
  return v;
}

void expectSameOnEveryRank(const std::vector<float>& mine, const std::string& codec) {
  std::vector<float> root = mine;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
  ASSERT_EQ(mine, root) << codec << ": this rank differs from rank 0";
}

TEST(CompressedAllreduceMpi, EveryCodecLeavesEveryRankIdentical) {
  MpiCommunicator comm;
  for (const char* name : {"fp16", "bf16", "qsgd", "topk", "randomk", "threshold", "sign"}) {
    CodecOptions options;
    options.codec = name;
    options.threshold = 0.009;
    CompressedAllreduce reduce(comm, AllreduceChoice("ring"), options, kCount);
    for (int step = 0; step < 3; ++step) {
      auto data = gradient(comm.rank() + step);
      const auto stats = reduce.run(data.data(), kCount);
      expectSameOnEveryRank(data, name);
      if (comm.size() > 1) {
        EXPECT_GT(stats.bytes_tx, 0) << name;
        EXPECT_LT(stats.bytes_tx, stats.bytes_raw) << name << " sent more than uncompressed";
      }
    }
  }
}

// powersgd's products run where the gradient is (here the CPU's), its P and Q summed over
// the ranks: every rank ends with the same mean, for a fraction of the bytes.
TEST(CompressedAllreduceMpi, PowerSgdLeavesEveryRankIdentical) {
  MpiCommunicator comm;
  CodecOptions options;
  options.codec = "powersgd";
  options.matrices = {{0, 100, 1000}};
  PowerSgdSync sync(comm, AllreduceChoice("ring"), options, cpuDevice());
  sync.start(nullptr, kCount);
  for (int step = 0; step < 3; ++step) {
    auto data = gradient(comm.rank() + step);
    const SyncStats stats = sync.sync(data.data(), kCount);
    expectSameOnEveryRank(data, "powersgd");
    if (comm.size() > 1) {
      EXPECT_LT(stats.bytes_tx * 4, stats.bytes_raw);
    }
  }
}

TEST(CompressedAllreduceMpi, Fp16RingIsExactOnSmallIntegers) {
  MpiCommunicator comm;
  CodecOptions options;
  options.codec = "fp16";
  CompressedAllreduce reduce(comm, AllreduceChoice("ring"), options, kCount);
  std::vector<float> data(kCount);
  for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<float>(comm.rank() + i % 9);
  auto reference = data;
  MPI_Allreduce(MPI_IN_PLACE, reference.data(), kCount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  reduce.run(data.data(), kCount);
  EXPECT_EQ(data, reference);
}

}  // namespace
}  // namespace ranklab
