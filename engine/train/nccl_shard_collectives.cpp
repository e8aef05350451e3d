#include "engine/train/nccl_shard_collectives.h"

#include <algorithm>

namespace ranklab {

NcclShardCollectives::NcclShardCollectives(Communicator& peers, int gpu)
    : nccl_(peers, gpu), reduce_scatter_(nccl_), all_gather_(nccl_) {}

size_t NcclShardCollectives::chunkOf(size_t total) const {
  const auto n = static_cast<size_t>(size());
  return (total + n - 1) / n;
}

Chunk NcclShardCollectives::owned(size_t total) const {
  const size_t chunk = chunkOf(total), r = static_cast<size_t>(nccl_.rank());
  const size_t begin = std::min(r * chunk, total);
  return {begin, std::min((r + 1) * chunk, total) - begin};
}

size_t NcclShardCollectives::paddedCount(size_t total) const {
  return chunkOf(total) * static_cast<size_t>(size());
}

std::vector<NcclShardCollectives::Part> NcclShardCollectives::partsOf(size_t offset, size_t count,
                                                                      size_t total) const {
  const size_t chunk = chunkOf(total), own_begin = owned(total).begin;
  std::vector<Part> parts;
  for (int q = 0; q < size(); ++q) {
    const size_t begin = std::min(q * chunk, total);
    const OwnedPart part =
        ownedPartOf({begin, std::min(begin + chunk, total) - begin}, offset, count);
    if (part.end == part.begin) continue;
    const bool mine = q == nccl_.rank();
    parts.push_back(
        {q, part.begin - offset, mine ? part.begin - own_begin : 0, part.end - part.begin, mine});
  }
  return parts;
}

void NcclShardCollectives::countRingEquivalent(size_t floats) {
  const int n = size();
  bytes_ = static_cast<int64_t>(floats * sizeof(float)) * (n - 1) / n;
}

void NcclShardCollectives::reduceScatterMean(float* data, size_t total) {
  if (total != paddedCount(total)) {
    reduceScatterMean(data, 0, total, total, data + owned(total).begin);  // in place, by owner
    return;
  }
  const size_t chunk = chunkOf(total);
  reduce_scatter_.run(data, data + nccl_.rank() * chunk, chunk, /*mean=*/true);
  countRingEquivalent(total);
}

void NcclShardCollectives::allGather(float* data, size_t total) {
  if (total != paddedCount(total)) {
    allGather(data + owned(total).begin, data, 0, total, total);  // in place, by owner
    return;
  }
  const size_t chunk = chunkOf(total);
  all_gather_.run(data + nccl_.rank() * chunk, data, chunk);
  countRingEquivalent(total);
}

void NcclShardCollectives::reduceScatterMean(float* window, size_t offset, size_t count,
                                             size_t total, float* shard) {
  std::vector<NcclPiece> pieces;
  for (const Part& p : partsOf(offset, count, total))
    pieces.push_back({p.owner, window + p.in_window, p.mine ? shard + p.in_shard : nullptr, p.len});
  reduce_scatter_.run(pieces, /*mean=*/true);
  countRingEquivalent(count);
}

void NcclShardCollectives::allGather(const float* shard, float* window, size_t offset, size_t count,
                                     size_t total) {
  std::vector<NcclPiece> pieces;
  for (const Part& p : partsOf(offset, count, total))
    pieces.push_back({p.owner, p.mine ? shard + p.in_shard : nullptr, window + p.in_window, p.len});
  all_gather_.run(pieces);
  countRingEquivalent(count);
}

}  // namespace ranklab
