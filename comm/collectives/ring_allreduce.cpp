#include "comm/collectives/ring_allreduce.h"

#include <algorithm>
#include <cstring>

#include "comm/collectives/chunks.h"
#include "comm/collectives/sum_into.h"
#include "comm/steady_clock.h"

namespace ranklab {

RingAllreduce::RingAllreduce(Communicator& comm, size_t segment_floats)
    : comm_(comm),
      rank_(comm.rank()),
      world_(comm.size()),
      right_((comm.rank() + 1) % comm.size()),
      left_((comm.rank() + comm.size() - 1) % comm.size()),
      segment_floats_(std::max<size_t>(segment_floats, 1)) {}

RingAllreduce::Span RingAllreduce::chunk(float* data, size_t count, int c) const {
  // The first total % world chunks take one extra float.
  const Chunk bounds = evenChunk(total_, world_, ((c % world_) + world_) % world_);
  const size_t begin = std::clamp(bounds.begin, offset_, offset_ + count);
  const size_t end = std::clamp(bounds.begin + bounds.len, offset_, offset_ + count);
  return {data + (begin - offset_), end - begin};
}

void RingAllreduce::setWindow(float* data, size_t offset, size_t count, size_t total) {
  offset_ = offset;
  total_ = total;
  longest_ = 0;
  for (int c = 0; c < world_; ++c) longest_ = std::max(longest_, chunk(data, count, c).len);
  for (auto& buffer : incoming_) buffer.resize(std::min(longest_, segment_floats_));
}

Chunk RingAllreduce::ownedChunk(size_t total) const {
  return evenChunk(total, world_, (rank_ + 1) % world_);
}

void RingAllreduce::reduceStep(const Span& out, const Span& in) {
  // Piece k of both chunks moves as one message pair; every rank counts pieces of the
  // longest chunk (chunk 0), so sender and receiver agree even when a piece is empty.
  const size_t pieces = std::max<size_t>(1, (longest_ + segment_floats_ - 1) / segment_floats_);
  auto len = [&](const Span& s, size_t k) {
    const size_t off = k * segment_floats_;
    return off < s.len ? std::min(segment_floats_, s.len - off) : size_t{0};
  };
  auto post = [&](size_t k, Ticket& recv, Ticket& send) {
    recv =
        comm_.irecv(incoming_[k % 2].data(), len(in, k) * sizeof(float), left_, tags::kCollective);
    send = comm_.isend(out.ptr + k * segment_floats_, len(out, k) * sizeof(float), right_,
                       tags::kCollective);
    bytes_sent_ += static_cast<int64_t>(len(out, k) * sizeof(float));
    bytes_received_ += static_cast<int64_t>(len(in, k) * sizeof(float));
  };
  Ticket recv[2], send[2];
  post(0, recv[0], send[0]);
  for (size_t k = 0; k < pieces; ++k) {
    // Next piece in flight while this one is added.
    if (k + 1 < pieces) post(k + 1, recv[(k + 1) % 2], send[(k + 1) % 2]);
    recv[k % 2]->wait();
    sumInto(in.ptr + k * segment_floats_, incoming_[k % 2].data(), len(in, k));
    send[k % 2]->wait();
  }
}

void RingAllreduce::gatherStep(const Span& out, const Span& in) {
  // Nothing to add: the whole chunk moves as one message each way.
  Ticket recv = comm_.irecv(in.ptr, in.len * sizeof(float), left_, tags::kCollective);
  Ticket send = comm_.isend(out.ptr, out.len * sizeof(float), right_, tags::kCollective);
  recv->wait();
  send->wait();
  bytes_sent_ += static_cast<int64_t>(out.len * sizeof(float));
  bytes_received_ += static_cast<int64_t>(in.len * sizeof(float));
}

void RingAllreduce::traceHop(const char* kind, int part, int c, int64_t bytes, int64_t t0) {
  CommSpan hop;
  hop.kind = kind;
  hop.part = part;
  hop.peer = right_;
  hop.chunk = ((c % world_) + world_) % world_;
  hop.bytes = bytes;
  hop.begin_ns = t0;
  hop.end_ns = steadyNowNs();
  trace_->push_back(hop);
}

const char* RingAllreduce::pathFor(size_t count) const {
  if (trace_ || world_ < 2 || world_ > kGatherWorld || count == 0) return "ring";  // a traced
  if (count * static_cast<size_t>(world_ - 1) <= kGatherFloats) return "gather";   // ring shows
  return world_ > 2 && count <= kPairwiseFloats ? "pairwise" : "ring";             // its hops
}

void RingAllreduce::sumChunkInRingOrder(float* out, const float* base, size_t stride, int c,
                                        size_t len) {
  inputs_.resize(world_);
  for (int k = 0; k < world_; ++k) inputs_[k] = base + ((c + k) % world_) * stride;
  sumInOrder(out, inputs_.data(), world_, len);
}

void RingAllreduce::gatherThenSum(float* data, size_t count) {
  gathered_.resize(count * world_);
  const size_t bytes = count * sizeof(float);
  std::memcpy(gathered_.data() + rank_ * count, data, bytes);
  if (world_ == 2) {  // one blocking exchange: no requests to allocate
    comm_.sendRecv(data, bytes, right_, gathered_.data() + right_ * count, bytes, right_);
  } else {
    std::vector<Ticket> tickets;
    for (int peer = 0; peer < world_; ++peer) {
      if (peer == rank_) continue;
      tickets.push_back(
          comm_.irecv(gathered_.data() + peer * count, bytes, peer, tags::kCollective));
      tickets.push_back(comm_.isend(data, bytes, peer, tags::kCollective));
    }
    for (Ticket& t : tickets) t->wait();
  }
  for (int c = 0; c < world_; ++c) {
    const Chunk piece = evenChunk(count, world_, c);
    sumChunkInRingOrder(data + piece.begin, gathered_.data() + piece.begin, count, c, piece.len);
  }
  // Counted as the ring would have moved it (one formula for the algorithm, as mpi's).
  const auto len = [&](int c) { return evenChunk(count, world_, c % world_).len; };
  bytes_sent_ = static_cast<int64_t>((2 * count - len(rank_ + 1) - len(rank_ + 2)) * sizeof(float));
  bytes_received_ = static_cast<int64_t>((2 * count - len(rank_) - len(rank_ + 1)) * sizeof(float));
}

// Chunk c is summed by rank c - 1, as after the ring's reduce-scatter (ownedChunk).
void RingAllreduce::pairwise(float* data, size_t count) {
  const int owned = (rank_ + 1) % world_;
  const Chunk mine = evenChunk(count, world_, owned);
  const auto ownerOf = [&](int c) { return (c + world_ - 1) % world_; };
  gathered_.resize(mine.len * world_);
  std::memcpy(gathered_.data() + rank_ * mine.len, data + mine.begin, mine.len * sizeof(float));
  std::vector<Ticket> tickets;
  bytes_sent_ = bytes_received_ = 0;
  const auto move = [&](Ticket t, size_t floats, bool sent) {
    tickets.push_back(std::move(t));
    (sent ? bytes_sent_ : bytes_received_) += static_cast<int64_t>(floats * sizeof(float));
  };
  for (int c = 0; c < world_; ++c) {  // each chunk to the rank that sums it
    if (c == owned) continue;
    const Chunk piece = evenChunk(count, world_, c);
    const int peer = ownerOf(c);
    move(comm_.irecv(gathered_.data() + peer * mine.len, mine.len * sizeof(float), peer,
                     tags::kCollective),
         mine.len, false);
    move(comm_.isend(data + piece.begin, piece.len * sizeof(float), peer, tags::kCollective),
         piece.len, true);
  }
  for (Ticket& t : tickets) t->wait();
  tickets.clear();
  sumChunkInRingOrder(data + mine.begin, gathered_.data(), mine.len, owned, mine.len);
  for (int c = 0; c < world_; ++c) {  // each sum to every rank
    if (c == owned) continue;
    const Chunk piece = evenChunk(count, world_, c);
    const int peer = ownerOf(c);
    move(comm_.irecv(data + piece.begin, piece.len * sizeof(float), peer, tags::kCollective),
         piece.len, false);
    move(comm_.isend(data + mine.begin, mine.len * sizeof(float), peer, tags::kCollective),
         mine.len, true);
  }
  for (Ticket& t : tickets) t->wait();
}

void RingAllreduce::run(float* data, size_t count) {
  const char* path = pathFor(count);
  if (path[0] == 'g') return gatherThenSum(data, count);
  if (path[0] == 'p') return pairwise(data, count);
  reduceScatter(data, count);
  const int64_t sent = bytes_sent_, received = bytes_received_;
  allGather(data, count);
  bytes_sent_ += sent;
  bytes_received_ += received;
}

void RingAllreduce::reduceScatterWindow(float* window, size_t offset, size_t count, size_t total) {
  bytes_sent_ = bytes_received_ = 0;
  if (world_ == 1 || count == 0) return;
  setWindow(window, offset, count, total);
  // Step s sends chunk (rank - s) and adds the received chunk (rank - s - 1); after n-1
  // steps this rank holds the complete sum of chunk (rank + 1).
  for (int s = 0; s < world_ - 1; ++s) {
    const int64_t t0 = trace_ ? steadyNowNs() : 0, sent = bytes_sent_;
    reduceStep(chunk(window, count, rank_ - s), chunk(window, count, rank_ - s - 1));
    if (trace_) traceHop("ring-rs", s, rank_ - s, bytes_sent_ - sent, t0);
  }
}

void RingAllreduce::allGatherWindow(float* window, size_t offset, size_t count, size_t total) {
  bytes_sent_ = bytes_received_ = 0;
  if (world_ == 1 || count == 0) return;
  setWindow(window, offset, count, total);
  // Step s forwards the complete chunk (rank + 1 - s) and receives (rank - s).
  for (int s = 0; s < world_ - 1; ++s) {
    const int64_t t0 = trace_ ? steadyNowNs() : 0, sent = bytes_sent_;
    gatherStep(chunk(window, count, rank_ + 1 - s), chunk(window, count, rank_ - s));
    if (trace_) traceHop("ring-ag", world_ - 1 + s, rank_ + 1 - s, bytes_sent_ - sent, t0);
  }
}

}  // namespace ranklab
