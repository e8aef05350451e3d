#include "engine/train/nccl_transport.h"

#include <algorithm>
#include <stdexcept>

#include "comm/nccl/nccl_allreduce.h"

namespace ranklab {

namespace {

// NCCL's all-reduce behind the algorithms' interface. NCCL picks its own ring or tree, so
// the bytes counted are a ring's: 2 (n - 1) / n of the buffer each way.
class NcclMeanAllreduce : public Allreduce {
 public:
  explicit NcclMeanAllreduce(NcclComm& nccl) : nccl_(nccl), allreduce_(nccl) {}

  void run(float* data, size_t count) override { reduce(data, count, false); }
  void runScaled(float* data, size_t count, float scale) override {
    if (scale == 1.f) return run(data, count);
    if (scale != 1.f / static_cast<float>(nccl_.size()))
      throw std::logic_error("NCCL's all-reduce scales by 1 / ranks alone");
    reduce(data, count, true);
  }
  int64_t bytesSent() const override { return bytes_; }
  int64_t bytesReceived() const override { return bytes_; }
  // NCCL's kernels wait for the peers: no host barrier before it.
  bool waitsForPeers() const override { return true; }

 private:
  void reduce(float* data, size_t count, bool mean) {
    allreduce_.run(data, count, mean);
    const int n = nccl_.size();
    bytes_ = 2 * (n - 1) * static_cast<int64_t>(count * sizeof(float)) / n;
  }

  NcclComm& nccl_;
  NcclAllreduce allreduce_;
  int64_t bytes_ = 0;
};

}  // namespace

std::unique_ptr<Allreduce> NcclTransport::allreduce(const AllreduceChoice& /*algorithm*/) {
  return std::make_unique<NcclMeanAllreduce>(nccl_);
}

NcclTransport::NcclTransport(Communicator& group, const DeviceMemory& memory, int gpu)
    : group_(group),
      memory_(memory),
      nccl_(group, gpu),
      reduce_scatter_(nccl_),
      all_gather_(nccl_) {}

size_t NcclTransport::chunkOf(size_t total) const {
  const auto n = static_cast<size_t>(size());
  return (total + n - 1) / n;
}

Chunk NcclTransport::owned(size_t total) const {
  const size_t chunk = chunkOf(total), r = static_cast<size_t>(nccl_.rank());
  const size_t begin = std::min(r * chunk, total);
  return {begin, std::min((r + 1) * chunk, total) - begin};
}

size_t NcclTransport::paddedCount(size_t total) const {
  return chunkOf(total) * static_cast<size_t>(size());
}

std::vector<NcclTransport::Part> NcclTransport::partsOf(size_t offset, size_t count,
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

void NcclTransport::countRingEquivalent(size_t floats) {
  const int n = size();
  bytes_ = static_cast<int64_t>(floats * sizeof(float)) * (n - 1) / n;
}

void NcclTransport::reduceScatterMean(float* data, size_t total) {
  if (total != paddedCount(total)) {
    reduceScatterMean(data, 0, total, total, data + owned(total).begin);  // in place, by owner
    return;
  }
  const size_t chunk = chunkOf(total);
  reduce_scatter_.run(data, data + nccl_.rank() * chunk, chunk, /*mean=*/true);
  countRingEquivalent(total);
}

void NcclTransport::allGather(float* data, size_t total) {
  if (total != paddedCount(total)) {
    allGather(data + owned(total).begin, data, 0, total, total);  // in place, by owner
    return;
  }
  const size_t chunk = chunkOf(total);
  all_gather_.run(data + nccl_.rank() * chunk, data, chunk);
  countRingEquivalent(total);
}

void NcclTransport::reduceScatterMean(float* window, size_t offset, size_t count, size_t total,
                                      float* shard) {
  std::vector<NcclPiece> pieces;
  for (const Part& p : partsOf(offset, count, total))
    pieces.push_back({p.owner, window + p.in_window, p.mine ? shard + p.in_shard : nullptr, p.len});
  reduce_scatter_.run(pieces, /*mean=*/true);
  countRingEquivalent(count);
}

void NcclTransport::allGather(const float* shard, float* window, size_t offset, size_t count,
                              size_t total) {
  std::vector<NcclPiece> pieces;
  for (const Part& p : partsOf(offset, count, total))
    pieces.push_back({p.owner, p.mine ? shard + p.in_shard : nullptr, window + p.in_window, p.len});
  all_gather_.run(pieces);
  countRingEquivalent(count);
}

}  // namespace ranklab
