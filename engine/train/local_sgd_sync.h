// Local SGD (parallel.strategy = "local-sgd"): each rank steps on its own gradients, and
// every `average_every` steps the ranks replace their models by the mean model. Only the
// averaging steps communicate.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "comm/collectives/allreduce_registry.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/gradient_transport.h"

namespace ranklab {

class LocalSgdSync : public GradientSync {
 public:
  LocalSgdSync(std::unique_ptr<GradientTransport> transport, const AllreduceChoice& algorithm,
               int average_every);

  Communicator& peers() override { return comm_; }
  SyncStats sync(float* grads, size_t count) override;
  SyncStats afterUpdate(float* params, size_t count) override;
  void refresh(float* params, size_t count) override;
  size_t bufferBytesHeld() const override { return transport_->hostBytesHeld(); }

 private:
  std::unique_ptr<GradientTransport> transport_;
  Communicator& comm_;
  std::unique_ptr<Allreduce> allreduce_;
  int average_every_;
  int64_t steps_ = 0;
  int64_t averaged_at_ = 0;  // step of the last average
};

}  // namespace ranklab
