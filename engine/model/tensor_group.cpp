#include "engine/model/tensor_group.h"

#include "comm/steady_clock.h"

namespace ranklab {

void TensorGroup::sum(float* data, size_t count, bool in_backward, const ComputeDevice& device) {
  if (comm_.size() == 1) return;
  const int64_t t0 = steadyNowNs();
  if (device.hostMemory()) {
    ring_.run(data, count);
  } else {
    host_.resize(count);
    device.download(host_.data(), data, count);
    ring_.run(host_.data(), count);
    device.upload(data, host_.data(), count);
  }
  (in_backward ? counts_.backward_ns : counts_.forward_ns) += steadyNowNs() - t0;
  ++counts_.allreduces;
  counts_.bytes_tx += ring_.bytesSent();
  counts_.bytes_rx += ring_.bytesReceived();
}

TensorParallelCounts TensorGroup::take() {
  const TensorParallelCounts taken = counts_;
  counts_ = {};
  return taken;
}

}  // namespace ranklab
