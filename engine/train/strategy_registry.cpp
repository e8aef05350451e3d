// The training strategies by name. Adding one: its GradientSync in its own file, one entry
// below, its test (tests/unit/strategies_thread_test.cpp).
#include "engine/train/strategy_registry.h"

#include <stdexcept>

#include "comm/codecs/codec_traits.h"
#include "comm/registry.h"
#include "engine/train/allreduce_sync.h"
#include "engine/train/local_sgd_sync.h"
#include "engine/train/powersgd_sync.h"
#include "engine/train/priority_sync.h"
#include "engine/train/ps_worker_sync.h"
#include "engine/train/shm_sharded_sync.h"
#include "engine/train/zero_sync.h"

namespace ranklab {

const std::vector<StrategyEntry>& strategyRegistry() {
  static const std::vector<StrategyEntry> strategies = {
      {"allreduce",
       "synchronous data parallel: every rank all-reduces its gradient (parallel.algorithm) "
       "and steps its own optimizer; shm-sharded shares one model and splits the update; "
       "parallel.zero shards the optimizer state (1) and the gradients (2); "
       "parallel.comm_schedule = priority sends the first layers' pieces first",
       [](const JobSpec& job, Communicator& world,
          std::vector<MatrixBlock> matrices) -> std::unique_ptr<GradientSync> {
         const auto& p = job.parallel;
         if (p.zero > 0) return std::make_unique<ZeroSync>(world, p.zero);
         if (p.sharesOneModel()) return std::make_unique<ShmShardedSync>(world);
         // powersgd's products run where the gradient is: here the CPU's.
         if (codecTraitsOf(job.compression.codec).form == CodecForm::kLowRank) {
           return std::make_unique<PowerSgdSync>(
               world, allreduceOf(p), codecOptions(job, std::move(matrices)), cpuDevice());
         }
         if (p.comm_schedule == "priority") {
           return std::make_unique<PrioritySync>(world, allreduceOf(p),
                                                 static_cast<size_t>(p.partition_kb) * 1024,
                                                 static_cast<size_t>(p.credit_kb) * 1024);
         }
         return std::make_unique<AllreduceSync>(world, allreduceOf(p),
                                                static_cast<size_t>(p.bucket_kb) * 1024,
                                                codecOptions(job, std::move(matrices)));
       }},
      {"ps-sync", "parameter servers apply the mean of every worker's push once all pushed",
       [](const JobSpec& job, Communicator& world,
          std::vector<MatrixBlock>) -> std::unique_ptr<GradientSync> {
         return std::make_unique<ParameterServerSync>(world, job);
       }},
      {"ps-async", "parameter servers apply each push at once and answer that worker alone",
       [](const JobSpec& job, Communicator& world,
          std::vector<MatrixBlock>) -> std::unique_ptr<GradientSync> {
         return std::make_unique<ParameterServerSync>(world, job);
       }},
      {"local-sgd", "ranks step alone and average their models every parallel.average_every",
       [](const JobSpec& job, Communicator& world,
          std::vector<MatrixBlock>) -> std::unique_ptr<GradientSync> {
         const auto& p = job.parallel;
         return std::make_unique<LocalSgdSync>(world, allreduceOf(p), p.average_every);
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

std::unique_ptr<GradientSync> makeGradientSync(const JobSpec& job, Communicator& world,
                                               std::vector<MatrixBlock> matrices) {
  std::string allowed;
  for (const auto& s : strategyRegistry()) {
    if (s.name == job.parallel.strategy) return s.make(job, world, std::move(matrices));
    allowed += (allowed.empty() ? "" : ", ") + s.name;
  }
  throw std::invalid_argument("parallel.strategy \"" + job.parallel.strategy +
                              "\" is not available; allowed: " + allowed);
}

}  // namespace ranklab
