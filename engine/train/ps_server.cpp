#include "engine/train/ps_server.h"

#include <memory>
#include <vector>

#include "comm/ps/async_server.h"
#include "comm/ps/sync_server.h"
#include "engine/job/strategy_traits.h"
#include "engine/optim/optimizer.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

bool isServerRank(const JobSpec& job, int world_rank) {
  return usesParameterServer(job) && world_rank >= job.parallel.ranks;
}

void serveParameters(const JobSpec& job, Communicator& world, TrainObserver& observer) {
  world.split(-1, world.rank());  // the workers split themselves off; servers take no part
  const int workers = job.parallel.ranks;
  std::vector<int> worker_ranks(workers);
  for (int w = 0; w < workers; ++w) worker_ranks[w] = w;
  ParameterShard shard(
      world, world.rank() - workers, job.parallel.servers, worker_ranks, evenKeyRanges,
      [&](const ServerLoad& load) { observer.onServerLoad(load); }, 250, codecOptions(job));
  // ps-async applies each worker's gradient alone at lr / W, so W pushes move the model as
  // far as one ps-sync step of their mean: the same learning rate per sample for both.
  const bool async = strategyTraitsOr(job.parallel.strategy).applies_each_push;
  const double lr_scale = async ? 1.0 / workers : 1.0;
  // The job's optimizer over this shard, made once the shard's size is known; the learning
  // rate comes with each push (the workers run the schedule).
  std::unique_ptr<Optimizer> optimizer;
  // With momentum correction the workers apply the momentum before compressing.
  TrainSpec update_rule = job.train;
  if (compressesWithMomentum(job)) update_rule.momentum = 0;
  UpdateHandler update = [&](float* params, const float* grads, size_t n, double lr) {
    if (!optimizer) optimizer = makeOptimizer(update_rule, n);
    optimizer->step(params, grads, lr * lr_scale);
  };
  if (async) {
    AsyncServer(shard, update, {job.parallel.staleness, job.parallel.delay_compensation}).run();
  } else {
    SyncServer(shard, update).run();
  }
}

}  // namespace ranklab
