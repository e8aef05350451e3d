// The training strategies by name. Adding one: its GradientSync in its own file, one entry
// below, its test (tests/unit/strategies_thread_test.cpp).
#include "engine/train/strategy_registry.h"

#include <stdexcept>

#include "comm/codecs/codec_traits.h"
#include "comm/registry.h"
#include "engine/train/allreduce_sync.h"
#include "engine/train/device_codec_sync.h"
#include "engine/train/device_encoder.h"
#include "engine/train/local_sgd_sync.h"
#include "engine/train/powersgd_sync.h"
#include "engine/train/priority_sync.h"
#include "engine/train/ps_worker_sync.h"
#include "engine/train/shm_sharded_sync.h"
#include "engine/train/transport_choice.h"
#include "engine/train/zero_sync.h"

namespace ranklab {

namespace {

// What crosses ranks where a strategy's own buffers travel over the transport.
std::string carriedHow(const SyncContext& c) {
  if (c.transport->kind() == TransportKind::kNccl)
    return "gradients all-reduced by NCCL on the GPUs";
  return "gradients copied to the host for " + c.job.parallel.strategy;
}

MadeSync makeZero(SyncContext& c) {
  const int stage = c.job.parallel.zero;
  const std::string how =
      "ZeRO stage " + std::to_string(stage) +
      (c.transport->kind() == TransportKind::kNccl
           ? ": gradients reduce-scattered and parameters all-gathered by NCCL on the GPUs"
           : ": gradients copied to the host for the ring's reduce-scatters and parameters "
             "for its all-gathers; the shards and the optimizer state stay on the GPU");
  return {std::make_unique<ZeroSync>(stage, std::move(c.transport)), how};
}

MadeSync makeShmSharded(SyncContext& c) {
  // Job validation refuses this on a GPU; a JobSpec built in code must not slip past.
  if (!c.device.hostMemory()) {
    throw std::invalid_argument("train.device \"" + c.device.name() +
                                "\": shm-sharded keeps the model in host shared memory; on a "
                                "GPU shard the update with parallel.zero");
  }
  return {std::make_unique<ShmShardedSync>(c.group), ""};
}

// Its products run where the gradient is: only P and Q (and the uncompressed rest) cross.
MadeSync makePowerSgd(SyncContext& c) {
  return {std::make_unique<PowerSgdSync>(c.group, allreduceOf(c.job.parallel),
                                         codecOptions(c.job, std::move(c.matrices)), c.device),
          "powersgd's products on the GPU: only its P and Q (and the uncompressed rest) "
          "copied to the host and summed there"};
}

// A codec that encodes on the device: its payload crosses to the host, not the gradient.
MadeSync makeDeviceCodec(SyncContext& c) {
  const CodecOptions codec = codecOptions(c.job);
  return {
      std::make_unique<DeviceCodecSync>(c.group, allreduceOf(c.job.parallel), codec, c.device),
      codec.codec + " encoded on the GPU: only its payload copied to the host and exchanged there"};
}

MadeSync makePriority(SyncContext& c) {
  const ParallelSpec& p = c.job.parallel;
  const std::string how = carriedHow(c);
  return {std::make_unique<PrioritySync>(std::move(c.transport), allreduceOf(p),
                                         static_cast<size_t>(p.partition_kb) * 1024,
                                         static_cast<size_t>(p.credit_kb) * 1024),
          how};
}

MadeSync makePlainAllreduce(SyncContext& c) {
  const ParallelSpec& p = c.job.parallel;
  const std::string how = carriedHow(c);
  return {std::make_unique<AllreduceSync>(std::move(c.transport), allreduceOf(p),
                                          static_cast<size_t>(p.bucket_kb) * 1024,
                                          codecOptions(c.job, std::move(c.matrices))),
          how};
}

// The all-reduce strategy's forms, the first that applies made.
struct AllreduceForm {
  bool (*applies)(const SyncContext&);
  MadeSync (*make)(SyncContext&);
};
const AllreduceForm kAllreduceForms[] = {
    {[](const SyncContext& c) { return c.job.parallel.zero > 0; }, makeZero},
    {[](const SyncContext& c) { return c.job.parallel.sharesOneModel(); }, makeShmSharded},
    {[](const SyncContext& c) {
       return codecTraitsOf(c.job.compression.codec).form == CodecForm::kLowRank;
     },
     makePowerSgd},
    {[](const SyncContext& c) {
       return !c.device.hostMemory() && encodesOnDevice(codecOptions(c.job), c.group.size());
     },
     makeDeviceCodec},
    {[](const SyncContext& c) { return c.job.parallel.comm_schedule == CommSchedule::kPriority; },
     makePriority},
    {[](const SyncContext&) { return true; }, makePlainAllreduce},
};

MadeSync makeAllreduceForm(SyncContext& c) {
  for (const AllreduceForm& form : kAllreduceForms)
    if (form.applies(c)) return form.make(c);
  throw std::logic_error("allreduce: no form applies");  // the last one always does
}

// A parameter server's pushes, encoded shard by shard on the device where the codec can
// be; else the gradient and the parameters through host copies.
MadeSync makeParameterServer(SyncContext& c) {
  const bool on_device = !c.device.hostMemory() && hasDeviceEncode(c.job.compression.codec);
  return {std::make_unique<ParameterServerSync>(c.group, c.job, c.device, on_device),
          on_device ? c.job.compression.codec +
                          " pushes encoded on the GPU: only each shard's payload copied to the "
                          "host and sent to the servers, their parameters back through a host "
                          "copy"
                    : carriedHow(c)};
}

}  // namespace

const std::vector<StrategyEntry>& strategyRegistry() {
  static const std::vector<StrategyEntry> strategies = {
      {"allreduce",
       "synchronous data parallel: every rank all-reduces its gradient (parallel.algorithm) "
       "and steps its own optimizer; shm-sharded shares one model and splits the update; "
       "parallel.zero shards the optimizer state (1) and the gradients (2); "
       "parallel.comm_schedule = priority sends the first layers' pieces first",
       makeAllreduceForm},
      {"ps-sync", "parameter servers apply the mean of every worker's push once all pushed",
       makeParameterServer},
      {"ps-async", "parameter servers apply each push at once and answer that worker alone",
       makeParameterServer},
      {"local-sgd", "ranks step alone and average their models every parallel.average_every",
       [](SyncContext& c) -> MadeSync {
         const std::string how = carriedHow(c);
         const auto& p = c.job.parallel;
         return {std::make_unique<LocalSgdSync>(std::move(c.transport), allreduceOf(p),
                                                p.average_every),
                 how};
       }},
  };
  return strategies;
}

const std::vector<std::string>& strategyNames() {
  static const std::vector<std::string> names = namesOf(strategyRegistry());
  return names;
}

AllreduceChoice allreduceOf(const ParallelSpec& parallel) {
  return AllreduceChoice(parallel.algorithm, AllreduceOptions{parallel.ranks_per_host});
}

MadeSync makeGradientSync(const JobSpec& job, Communicator& group,
                          std::vector<MatrixBlock> matrices, const ComputeDevice& device) {
  std::string allowed;
  for (const auto& s : strategyRegistry()) {
    if (s.name != job.parallel.strategy) {
      allowed += (allowed.empty() ? "" : ", ") + s.name;
      continue;
    }
    SyncContext context{job, group, std::move(matrices), device, makeTransport(job, group, device)};
    const std::string why = context.transport->why();
    MadeSync made = s.make(context);
    made.how = device.hostMemory() ? "" : made.how + why;
    return made;
  }
  throw std::invalid_argument("parallel.strategy \"" + job.parallel.strategy +
                              "\" is not available; allowed: " + allowed);
}

}  // namespace ranklab
