#include "engine/model/sequence_parallel.h"

#include <stdexcept>

namespace ranklab {

Shape sequenceSliceOf(Shape whole, int slices) {
  if (whole.height % slices != 0) {
    throw std::invalid_argument(
        "parallel.sequence_parallel splits the " + std::to_string(whole.height) +
        " positions of model.context over parallel.tensor = " + std::to_string(slices) +
        " slices, which does not divide them");
  }
  return {whole.height / slices, whole.width, whole.channels};
}

size_t SequenceCollective::wholeFloats(int batch) const {
  const Shape whole = inputShape().size() > outputShape().size() ? inputShape() : outputShape();
  return static_cast<size_t>(batch) * whole.size();
}

ScatterToSequence::ScatterToSequence(std::string name, Shape whole, TensorGroup& group,
                                     const ComputeDevice& device)
    : SequenceCollective(std::move(name), whole, sequenceSliceOf(whole, group.size()), group,
                         device) {}

void ScatterToSequence::forward(const float* x, float* y, int batch, const ForwardPass&) {
  const Chunk own = ownPart(batch);
  device_.copy(y, x + own.begin, own.len);
}

void ScatterToSequence::backward(const float*, const float*, const float* dy, float* dx,
                                 int batch) {
  if (!dx) return;
  group_.allGatherFrom(dy, dx, wholeFloats(batch), true, device_);
}

GatherFromSequence::GatherFromSequence(std::string name, Shape whole, TensorGroup& group,
                                       const ComputeDevice& device)
    : SequenceCollective(std::move(name), sequenceSliceOf(whole, group.size()), whole, group,
                         device) {}

void GatherFromSequence::forward(const float* x, float* y, int batch, const ForwardPass&) {
  group_.allGatherFrom(x, y, wholeFloats(batch), false, device_);
}

void GatherFromSequence::backward(const float*, const float*, const float* dy, float* dx,
                                  int batch) {
  if (!dx) return;
  const Chunk own = ownPart(batch);
  device_.copy(dx, dy + own.begin, own.len);
}

}  // namespace ranklab
