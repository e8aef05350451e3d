#include "comm/collectives/ring_shard_collectives.h"

namespace ranklab {

void RingShardCollectives::reduceScatterMean(float* data, size_t total) {
  ring_.reduceScatter(data, total);
  const Chunk own = owned(total);
  const float scale = meanScale();
  for (size_t i = own.begin; i < own.begin + own.len; ++i) data[i] *= scale;
}

void RingShardCollectives::reduceScatterMean(float* window, size_t offset, size_t count,
                                             size_t total, float* shard) {
  ring_.reduceScatterWindow(window, offset, count, total);
  const Chunk own = owned(total);
  const OwnedPart part = ownedPartOf(own, offset, count);
  const float scale = meanScale();
  for (size_t i = part.begin; i < part.end; ++i) shard[i - own.begin] = window[i - offset] * scale;
}

void RingShardCollectives::allGather(const float* shard, float* window, size_t offset, size_t count,
                                     size_t total) {
  // This rank's part of the window from its shard, then everyone's.
  const Chunk own = owned(total);
  const OwnedPart part = ownedPartOf(own, offset, count);
  for (size_t i = part.begin; i < part.end; ++i) window[i - offset] = shard[i - own.begin];
  ring_.allGatherWindow(window, offset, count, total);
}

}  // namespace ranklab
