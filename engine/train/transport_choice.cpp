#include "engine/train/transport_choice.h"

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <vector>

#include "engine/job/device_spec.h"
#include "engine/job/strategy_traits.h"
#include "engine/train/host_transports.h"
#include "engine/train/nccl_seam.h"

namespace ranklab {

namespace {

// "cuda:3" -> 3 (a test's registered device, named otherwise: 0).
int gpuIndexOf(const ComputeDevice& device) {
  const std::optional<DeviceSpec> spec = parseDeviceSpec(device.name());
  return spec && spec->index >= 0 ? spec->index : 0;
}

// "" when every rank has a GPU of its own; else which GPU of which host is shared (the
// same answer on every rank: collective over `group`).
std::string sharedGpu(Communicator& group, int gpu) {
  std::unique_ptr<Communicator> host = group.splitByHost();
  constexpr int kMaxGpus = 100;  // train.device's cuda:N allows 0..99
  std::vector<float> ranks_on(kMaxGpus, 0.f);
  ranks_on[gpu] = 1.f;
  host->allreduceSumNative(ranks_on.data(), ranks_on.size());
  float shared = ranks_on[gpu] > 1.f ? static_cast<float>(gpu + 1) : 0.f;
  group.allreduceSumNative(&shared, 1);  // > 0 when some host shares a GPU
  if (shared == 0.f) return "";
  return ranks_on[gpu] > 1.f ? "this host's cuda:" + std::to_string(gpu) + " is shared by " +
                                   std::to_string(static_cast<int>(ranks_on[gpu])) + " ranks"
                             : "ranks on another host share a GPU";
}

// Why NCCL cannot carry this job ("" when it can). Every rank answers alike, so the
// collective in sharedGpu() is reached on all of them or none.
std::string whyNotNccl(const JobSpec& job, Communicator& group, int gpu) {
  if (!ncclBuilt()) return "this ranklab was built without NCCL";
  if (!strategyTraitsOr(job.parallel.strategy).all_reduces_gradient)
    return "parallel.strategy is " + job.parallel.strategy;
  if (job.parallel.sharesOneModel()) return "parallel.algorithm is shm-sharded";
  if (job.compression.compresses()) return "compression.codec is " + job.compression.codec;
  if (job.parallel.comm_schedule == CommSchedule::kPriority)
    return "parallel.comm_schedule is priority (its pieces are ordered on host copies)";
  const std::string shared = sharedGpu(group, gpu);
  if (!shared.empty()) return "NCCL refuses two ranks on one GPU: " + shared;
  return "";
}

}  // namespace

int localRank(const Communicator& world) {
  if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")) return std::atoi(local);
  return world.rank();
}

std::unique_ptr<GradientTransport> makeHostTransport(Communicator& group,
                                                     const DeviceMemory& memory) {
  return std::make_unique<HostTransport>(group, memory);
}

std::unique_ptr<GradientTransport> makeTransport(const JobSpec& job, Communicator& group,
                                                 const ComputeDevice& device) {
  if (device.hostMemory()) return makeHostTransport(group, device);
  const int gpu = gpuIndexOf(device);
  const DeviceCollectives wanted = job.parallel.device_collectives;
  const bool host = wanted == DeviceCollectives::kHost;
  const std::string why_not = host ? "" : whyNotNccl(job, group, gpu);
  if (!host && why_not.empty()) return makeNcclTransport(group, device, gpu);
  if (wanted == DeviceCollectives::kNccl) {
    throw std::invalid_argument("parallel.device_collectives = \"nccl\": " + why_not +
                                "; use \"host\" (or \"auto\") to run the all-reduce on host "
                                "copies");
  }
  return std::make_unique<StagedTransport>(group, device,
                                           why_not.empty()
                                               ? " (parallel.device_collectives = \"host\")"
                                               : " (not NCCL: " + why_not + ")");
}

}  // namespace ranklab
