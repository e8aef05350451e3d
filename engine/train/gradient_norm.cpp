#include "engine/train/gradient_norm.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ranklab {

GradientNorm::GradientNorm(double max_norm, GradientParts parts, std::vector<bool> counted_views)
    : max_norm_(max_norm), parts_(parts), counted_views_(std::move(counted_views)) {}

double GradientNorm::squaresOfThisPart(const Network& model, const float* grads, size_t first,
                                       size_t count, const DeviceMemory& device) const {
  if (counted_views_.empty()) return device.sumOfSquares(grads, count);
  double sum = 0;
  const std::vector<ParamView>& views = model.views();
  for (size_t v = 0; v < views.size(); ++v) {
    if (!counted_views_.at(v)) continue;
    const size_t begin = std::max(views[v].offset, first);
    const size_t end = std::min(views[v].offset + views[v].size, first + count);
    if (begin < end) sum += device.sumOfSquares(grads + (begin - first), end - begin);
  }
  return sum;
}

double GradientNorm::measureAndClip(const Network& model, float* grads, size_t first, size_t count,
                                    const DeviceMemory& device, int64_t& sums) const {
  if (parts_.split() && max_norm_ == 0) return 0;
  // Summed as a float over the parts (a native all-reduce); each part's sum is a double.
  float squares = static_cast<float>(squaresOfThisPart(model, grads, first, count, device));
  for (Communicator* group : {parts_.slices, parts_.stages, parts_.shards}) {
    if (!group || group->size() == 1) continue;
    group->allreduceSumNative(&squares, 1);
    ++sums;
  }
  const double norm = std::sqrt(static_cast<double>(squares));
  const double coefficient = max_norm_ / (norm + 1e-6);
  if (max_norm_ > 0 && coefficient < 1.0)
    device.scaleAndCheckFinite(grads, count, static_cast<float>(coefficient));
  return norm;
}

}  // namespace ranklab
