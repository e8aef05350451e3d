#include "engine/model/tensor_group.h"

#include "comm/steady_clock.h"

namespace ranklab {

void TensorGroup::sum(float* data, size_t count, bool in_backward, const ComputeDevice& device) {
  run(Op::kSum, data, count, in_backward, device);
}

void TensorGroup::reduceScatter(float* data, size_t count, bool in_backward,
                                const ComputeDevice& device) {
  run(Op::kReduceScatter, data, count, in_backward, device);
}

void TensorGroup::allGather(float* data, size_t count, bool in_backward,
                            const ComputeDevice& device) {
  run(Op::kAllGather, data, count, in_backward, device);
}

void TensorGroup::allGatherFrom(const float* part, float* whole, size_t count, bool in_backward,
                                const ComputeDevice& device) {
  const Chunk own = ownedPart(count);
  device.copy(whole + own.begin, part, own.len);
  allGather(whole, count, in_backward, device);
}

void TensorGroup::ringOp(Op op, float* data, size_t count) {
  switch (op) {
    case Op::kSum:
      ring_.run(data, count);
      ++counts_.allreduces;
      break;
    case Op::kReduceScatter:
      ring_.reduceScatter(data, count);
      ++counts_.reduce_scatters;
      break;
    case Op::kAllGather:
      ring_.allGather(data, count);
      ++counts_.all_gathers;
      break;
  }
  counts_.bytes_tx += ring_.bytesSent();
  counts_.bytes_rx += ring_.bytesReceived();
}

void TensorGroup::run(Op op, float* data, size_t count, bool in_backward,
                      const ComputeDevice& device) {
  if (comm_.size() == 1) return;
  const int64_t t0 = steadyNowNs();
  if (device.hostMemory()) {
    ringOp(op, data, count);
  } else {
    // Off the host the ring runs on a host copy: down what the op reads, up what it wrote.
    const Chunk own = ownedPart(count);
    host_.resize(count);
    if (op == Op::kAllGather)
      device.download(host_.data() + own.begin, data + own.begin, own.len);
    else
      device.download(host_.data(), data, count);
    ringOp(op, host_.data(), count);
    if (op == Op::kReduceScatter)
      device.upload(data + own.begin, host_.data() + own.begin, own.len);
    else
      device.upload(data, host_.data(), count);
  }
  (in_backward ? counts_.backward_ns : counts_.forward_ns) += steadyNowNs() - t0;
}

TensorParallelCounts TensorGroup::take() {
  const TensorParallelCounts taken = counts_;
  counts_ = {};
  return taken;
}

}  // namespace ranklab
