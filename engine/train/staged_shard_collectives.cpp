#include "engine/train/staged_shard_collectives.h"

namespace ranklab {

float* StagedShardCollectives::hostWindow(size_t count) {
  if (window_.size() < count) window_.resize(count);
  return window_.data();
}

float* StagedShardCollectives::hostShard(size_t total) {
  const size_t len = owned(total).len;
  if (shard_.size() < len) shard_.resize(len);
  return shard_.data();
}

void StagedShardCollectives::reduceScatterMean(float* data, size_t total) {
  float* host = hostWindow(total);
  memory_.download(host, data, total);
  ring_.reduceScatterMean(host, total);
  const Chunk own = owned(total);
  memory_.upload(data + own.begin, host + own.begin, own.len);
}

void StagedShardCollectives::allGather(float* data, size_t total) {
  float* host = hostWindow(total);
  const Chunk own = owned(total);
  memory_.download(host + own.begin, data + own.begin, own.len);
  ring_.allGather(host, total);
  memory_.upload(data, host, total);
}

void StagedShardCollectives::reduceScatterMean(float* window, size_t offset, size_t count,
                                               size_t total, float* shard) {
  float* host = hostWindow(count);
  float* host_shard = hostShard(total);
  memory_.download(host, window, count);
  ring_.reduceScatterMean(host, offset, count, total, host_shard);
  const Chunk own = owned(total);
  const OwnedPart part = ownedPartOf(own, offset, count);
  const size_t at = part.begin - own.begin;  // the window's owned part, in the shard
  memory_.upload(shard + at, host_shard + at, part.end - part.begin);
}

void StagedShardCollectives::allGather(const float* shard, float* window, size_t offset,
                                       size_t count, size_t total) {
  float* host = hostWindow(count);
  float* host_shard = hostShard(total);
  const Chunk own = owned(total);
  const OwnedPart part = ownedPartOf(own, offset, count);
  const size_t at = part.begin - own.begin;  // the window's owned part, in the shard
  memory_.download(host_shard + at, shard + at, part.end - part.begin);
  ring_.allGather(host_shard, host, offset, count, total);
  memory_.upload(window, host, count);
}

}  // namespace ranklab
