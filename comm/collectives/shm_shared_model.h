// A model trained by the ranks of one host, kept in shared memory for a sharded update:
// the parameters once (every rank reads them in forward and backward) and each rank's
// gradient in its own slot (backward writes it there, so nothing is copied in or out).
// After backward, reduceOwnChunk() sums this rank's chunk over every slot in slot order
// 0..n-1, scaled once, as ShmAllreduce does (so each element gets the same bits), into this
// rank's slot; the rank then updates that chunk of the parameters, and publish() makes every
// chunk's update visible before the next forward.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "comm/collectives/allreduce.h"
#include "comm/collectives/chunks.h"
#include "comm/communicator.h"

namespace ranklab {

class ShmSharedModel {
 public:
  // Collective over `comm`, for a model of `count` parameters. Throws std::invalid_argument
  // when its ranks do not all share one host.
  ShmSharedModel(Communicator& comm, size_t count);

  float* params() { return params_->slot(0); }
  float* grads() { return grads_->slot(rank_); }  // this rank's slot
  // The parameters this rank reduces and updates; chunks start on 64-byte lines so ranks
  // updating neighbouring chunks do not write one cache line.
  Chunk ownChunk() const { return own_; }

  // Fence (every slot holds its rank's gradient), then the sum of the own chunk times
  // `scale` into the own slot.
  void reduceOwnChunk(float scale);
  // Fence: every rank's chunk update is visible to every rank.
  void publish() { params_->fence(); }

  // The first fence of the last reduceOwnChunk(): waiting for the slowest rank's backward.
  SpanNs lastWait() const { return wait_; }
  // What the sum read from other ranks' slots, counted as ShmAllreduce counts a whole
  // gradient: 2(n-1)/n of it at n ranks.
  int64_t bytesMoved() const;

 private:
  int rank_;
  int world_;
  size_t count_;
  std::unique_ptr<SharedSlots> params_;
  std::unique_ptr<SharedSlots> grads_;
  Chunk own_;
  SpanNs wait_;
};

// Chunk c of `parts` over `count` floats, its edges rounded up to multiples of 16 floats.
Chunk lineAlignedChunk(size_t count, int parts, int c);

}  // namespace ranklab
