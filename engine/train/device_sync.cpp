#include "engine/train/device_sync.h"

#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "engine/job/device_spec.h"
#include "engine/job/strategy_traits.h"
#include "engine/train/device_codec_sync.h"
#include "engine/train/powersgd_sync.h"
#include "engine/train/ps_worker_sync.h"
#include "engine/train/staged_sync.h"
#include "engine/train/strategy_registry.h"

#include "engine/train/nccl_syncs.h"
#include "engine/train/staged_shard_collectives.h"
#include "engine/train/zero_sync.h"

namespace ranklab {

namespace {

// "cuda:3" -> 3 (a test's registered device, named otherwise: 0).
int gpuIndexOf(const ComputeDevice& device) {
  const std::optional<DeviceSpec> spec = parseDeviceSpec(device.name());
  return spec && spec->index >= 0 ? spec->index : 0;
}

// "" when every rank has a GPU of its own; else which GPU of which host is shared (the
// same answer on every rank: collective over `world`).
std::string sharedGpu(Communicator& world, int gpu) {
  std::unique_ptr<Communicator> host = world.splitByHost();
  constexpr int kMaxGpus = 100;  // train.device's cuda:N allows 0..99
  std::vector<float> ranks_on(kMaxGpus, 0.f);
  ranks_on[gpu] = 1.f;
  host->allreduceSumNative(ranks_on.data(), ranks_on.size());
  float shared = ranks_on[gpu] > 1.f ? static_cast<float>(gpu + 1) : 0.f;
  world.allreduceSumNative(&shared, 1);  // > 0 when some host shares a GPU
  if (shared == 0.f) return "";
  return ranks_on[gpu] > 1.f ? "this host's cuda:" + std::to_string(gpu) + " is shared by " +
                                   std::to_string(static_cast<int>(ranks_on[gpu])) + " ranks"
                             : "ranks on another host share a GPU";
}

// Why NCCL cannot run this job ("" when it can).
std::string whyNotNccl(const JobSpec& job, Communicator& world, int gpu) {
  if (!ncclBuilt()) return "this ranklab was built without NCCL";
  if (!strategyTraitsOr(job.parallel.strategy).all_reduces_gradient)
    return "parallel.strategy is " + job.parallel.strategy;
  if (job.compression.compresses()) return "compression.codec is " + job.compression.codec;
  if (job.parallel.comm_schedule == "priority")
    return "parallel.comm_schedule is priority (its pieces are ordered on host copies)";
  const std::string shared = sharedGpu(world, gpu);
  if (!shared.empty()) return "NCCL refuses two ranks on one GPU: " + shared;
  return "";
}

// The GPU buffers crossing ranks as they are: ZeRO's reduce-scatters and all-gathers, or
// one all-reduce of the gradient.
DeviceSync ncclSync(const JobSpec& job, Communicator& world, const ComputeDevice& device, int gpu) {
  const int stage = job.parallel.zero;
  if (stage == 0) return {makeNcclSync(world, gpu), "gradients all-reduced by NCCL on the GPUs"};
  return {std::make_unique<ZeroSync>(world, stage, makeNcclShardCollectives(world, gpu), device),
          "ZeRO stage " + std::to_string(stage) +
              ": gradients reduce-scattered and parameters all-gathered by NCCL on the GPUs"};
}

}  // namespace

int localRank(const Communicator& world) {
  if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")) return std::atoi(local);
  return world.rank();
}

DeviceSync makeDeviceSync(const JobSpec& job, Communicator& world,
                          std::vector<MatrixBlock> matrices, const ComputeDevice& device) {
  if (device.hostMemory()) return {makeGradientSync(job, world, std::move(matrices)), ""};
  // Job validation refuses these on a GPU; a JobSpec built in code must not slip past.
  const ParallelSpec& p = job.parallel;
  if (p.sharesOneModel()) {
    throw std::invalid_argument("train.device \"" + device.name() +
                                "\": shm-sharded keeps the model in host shared memory; on a "
                                "GPU shard the update with parallel.zero");
  }
  const int gpu = gpuIndexOf(device);
  const std::string& wanted = job.parallel.device_collectives;
  const std::string why_not = wanted == "host" ? "" : whyNotNccl(job, world, gpu);
  if (wanted != "host" && why_not.empty()) return ncclSync(job, world, device, gpu);
  if (wanted == "nccl") {
    throw std::invalid_argument("parallel.device_collectives = \"nccl\": " + why_not +
                                "; use \"host\" (or \"auto\") to run the all-reduce on host "
                                "copies");
  }
  const std::string how = why_not.empty() ? " (parallel.device_collectives = \"host\")"
                                          : " (not NCCL: " + why_not + ")";
  if (p.zero != 0) {
    auto staged = std::make_unique<StagedShardCollectives>(world, device);
    return {std::make_unique<ZeroSync>(world, p.zero, std::move(staged), device),
            "ZeRO stage " + std::to_string(p.zero) +
                ": gradients copied to the host for the ring's reduce-scatters and parameters "
                "for its all-gathers; the shards and the optimizer state stay on the GPU" +
                how};
  }
  // PowerSGD's products run on the device: its small P and Q cross to the host.
  const CodecForm form = codecTraitsOf(job.compression.codec).form;
  const StrategyTraits& strategy = strategyTraitsOr(p.strategy);
  if (strategy.all_reduces_gradient && form == CodecForm::kLowRank) {
    return {std::make_unique<PowerSgdSync>(world, allreduceOf(p),
                                           codecOptions(job, std::move(matrices)), device),
            "powersgd's products on the GPU: only its P and Q (and the uncompressed rest) "
            "copied to the host and summed there" +
                how};
  }
  // A parameter server's compressed pushes, encoded shard by shard on the device.
  if (strategy.parameter_servers && hasDeviceEncode(job.compression.codec)) {
    auto servers = std::make_unique<ParameterServerSync>(world, job, &device);
    return {std::make_unique<StagedSync>(std::move(servers), device, true),
            job.compression.codec +
                " pushes encoded on the GPU: only each shard's payload copied to the host and "
                "sent to the servers, their parameters back through a host copy" +
                how};
  }
  // A codec that encodes on the device: its payload crosses to the host, not the gradient.
  const CodecOptions codec = codecOptions(job);
  if (strategy.all_reduces_gradient && encodesOnDevice(codec, world.size())) {
    return {std::make_unique<DeviceCodecSync>(world, allreduceOf(p), codec, device),
            codec.codec +
                " encoded on the GPU: only its payload copied to the host and exchanged there" +
                how};
  }
  auto staged =
      std::make_unique<StagedSync>(makeGradientSync(job, world, std::move(matrices)), device);
  return {std::move(staged), "gradients copied to the host for " + job.parallel.strategy + how};
}

}  // namespace ranklab
