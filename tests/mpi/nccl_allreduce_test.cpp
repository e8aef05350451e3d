// Run under mpirun: NCCL all-reduce of device buffers equals the closed-form sum.
// Skipped with the reason where no GPU is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "comm/mpi/mpi_communicator.h"
#include "comm/nccl/nccl_allreduce.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/gpu_probe.h"

namespace ranklab {
namespace {

TEST(NcclAllreduce, SumsDeviceBuffers) {
  std::string why;
  if (kernels::usableGpus(&why) == 0) GTEST_SKIP() << "NCCL test skipped: " << why;
  MpiCommunicator comm;
  int devices = 0;
  cudaGetDeviceCount(&devices);
  // Every rank knows both numbers, so every rank skips together.
  if (comm.size() > devices) {
    GTEST_SKIP() << "NCCL test skipped: NCCL refuses two ranks on one GPU, and " << comm.size()
                 << " ranks share " << devices << " GPU(s)";
  }
  NcclComm nccl(comm, comm.rank() % devices);
  NcclAllreduce allreduce(nccl);
  for (size_t count : {size_t{1}, size_t{7}, size_t{1000003}}) {
    std::vector<float> host(count);
    for (size_t i = 0; i < count; ++i) host[i] = static_cast<float>(comm.rank() + i % 7);
    cuda::DeviceBuffer device(count);
    device.upload(host.data());
    allreduce.run(device.data(), count);
    device.download(host.data());
    const int n = comm.size();
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(host[i], static_cast<float>(n * (n - 1) / 2 + n * static_cast<int>(i % 7))) << i;
    }
  }
}

}  // namespace
}  // namespace ranklab
