// main() of every test program that runs under mpirun: one MPI session around the tests,
// output from rank 0 only, and a failure on any rank fails every rank's exit code.
#include <gtest/gtest.h>
#include <mpi.h>

#include "comm/mpi/mpi_communicator.h"

int main(int argc, char** argv) {
  ranklab::MpiSession mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any_failed;
}
