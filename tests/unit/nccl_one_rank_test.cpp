// NCCL's collectives on one rank: a mean is the values themselves, every element of them.
// NCCL below 2.29.7 leaves the last elements of a one-rank ncclAvg unwritten
// (NVIDIA/nccl#1950); on an H200 that kept the last 8 of a layer's 50,240 gradients at zero
// under ZeRO 2 and 3, so these sizes are checked element by element.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/memory/thread_communicator.h"
#include "engine/model/compute_device.h"
#include "kernels/gpu_probe.h"

#if RANKLAB_HAVE_NCCL
#include "comm/nccl/nccl_allreduce.h"
#include "comm/nccl/nccl_comm.h"
#include "comm/nccl/nccl_reduce_scatter.h"
#endif

namespace ranklab {
namespace {

#if RANKLAB_HAVE_NCCL
// count floats 1, 2, 3, ... on the device, through `run`, back to the host.
template <typename Run>
std::vector<float> throughTheGpu(size_t count, Run run) {
  const ComputeDevice& gpu = deviceNamed("cuda:0");
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i + 1);
  auto send = gpu.allocate(count), recv = gpu.allocate(count);
  gpu.upload(send->data(), values.data(), count);
  gpu.fill(recv->data(), count, 0.f);
  run(send->data(), recv->data(), count);
  std::vector<float> out(count);
  gpu.download(out.data(), recv->data(), count);
  return out;
}

void expectEveryValue(const std::vector<float>& got, const std::string& what) {
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != static_cast<float>(i + 1)) {
      ADD_FAILURE() << what << " of " << got.size() << " floats: element " << i << " is " << got[i]
                    << ", not " << i + 1;
      return;
    }
  }
}
#endif

TEST(NcclOneRank, AMeanOfOneRankKeepsEveryElement) {
  std::string why;
  if (kernels::usableGpus(&why) == 0) GTEST_SKIP() << "GPU tests skipped: " << why;
#if !RANKLAB_HAVE_NCCL
  GTEST_SKIP() << "this ranklab was built without NCCL";
#else
  ThreadRendezvous rendezvous(1);
  ThreadCommunicator bootstrap(rendezvous, 0);
  NcclComm nccl(bootstrap, 0);
  NcclAllreduce allreduce(nccl);
  NcclReduceScatter reduce_scatter(nccl);
  for (size_t count : {1, 7, 33, 1000, 50240, 50890}) {
    expectEveryValue(
        throughTheGpu(count, [&](float* send, float* recv,
                                 size_t n) { reduce_scatter.run(send, recv, n, /*mean=*/true); }),
        "reduce-scatter (mean)");
    expectEveryValue(throughTheGpu(count,
                                   [&](float* send, float* recv, size_t n) {
                                     reduce_scatter.run({{0, send, recv, n}}, /*mean=*/true);
                                   }),
                     "reduce to its owner (mean)");
    expectEveryValue(throughTheGpu(count,
                                   [&](float* send, float* recv, size_t n) {
                                     reduce_scatter.run({{0, send, recv, n}}, /*mean=*/false);
                                     allreduce.run(recv, n, /*mean=*/true);
                                   }),
                     "all-reduce (mean)");
  }
#endif
}

}  // namespace
}  // namespace ranklab
