#include "engine/train/local_sgd_sync.h"

#include "engine/train/model_average.h"

namespace ranklab {

LocalSgdSync::LocalSgdSync(std::unique_ptr<GradientTransport> transport,
                           const AllreduceChoice& algorithm, int average_every)
    : transport_(std::move(transport)),
      comm_(transport_->group()),
      allreduce_(transport_->allreduce(algorithm)),
      average_every_(average_every) {}

SyncStats LocalSgdSync::sync(float* /*grads*/, size_t /*count*/) {
  return {};  // gradients stay local
}

SyncStats LocalSgdSync::afterUpdate(float* params, size_t count) {
  if (++steps_ % average_every_ != 0) return {};
  averaged_at_ = steps_;
  return averageOverRanks(comm_, *allreduce_, params, count);
}

void LocalSgdSync::refresh(float* params, size_t count) {
  // An evaluation between averages would score a different model on every rank.
  if (averaged_at_ == steps_) return;
  averaged_at_ = steps_;
  averageOverRanks(comm_, *allreduce_, params, count);
}

}  // namespace ranklab
