// The sum all-reduce interface, with the bytes it moved. The algorithms, by name, are in
// allreduce_registry.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/communicator.h"

namespace ranklab {

// An interval on the steady clock, in ns; empty when begin_ns == end_ns.
struct SpanNs {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

// One piece of a collective, recorded for sampled steps so a timeline can open a step up
// and a lesson can show which chunk went where: a ring hop, one bucket's all-reduce.
struct CommSpan {
  const char* kind = "";  // "ring-rs" | "ring-ag" (a ring hop), "bucket" (or a priority
                          // piece), "ps-push" | "ps-reply"
  int part = -1;      // the hop's index in the all-reduce (0..2(n-1)-1), the bucket's, the shard's
  int peer = -1;      // the rank it sent to (in the collective's communicator), the shard's server
  int chunk = -1;     // the chunk it sent (a ring hop)
  int64_t bytes = 0;  // what it sent
  int64_t begin_ns = 0, end_ns = 0;
};
using CommSpans = std::vector<CommSpan>;

class Allreduce {
 public:
  virtual ~Allreduce() = default;
  virtual void run(float* data, size_t count) = 0;
  // The sum times `scale` (1/n: the mean). shm folds the scaling into its reduction; the
  // others run() and then scale, which gives the same bits.
  virtual void runScaled(float* data, size_t count, float scale);
  // Bytes this rank sent / received in the last run(). For `mpi` the library chooses its
  // own algorithm, so this is the ring-equivalent volume 2(n-1)/n * size.
  virtual int64_t bytesSent() const = 0;
  virtual int64_t bytesReceived() const = 0;
  // True when run() itself starts with a barrier of every rank (shm): a caller measuring
  // how long it waits for peers reads lastWait() instead of paying a barrier of its own.
  virtual bool waitsForPeers() const { return false; }
  // That barrier in the last run() (empty for the others).
  virtual SpanNs lastWait() const { return {}; }
  // Non-null: the pieces of each later run() are appended here (ring: its hops); null
  // stops it. Algorithms without pieces of their own record nothing.
  virtual void traceInto(CommSpans* /*sink*/) {}
  // How run() moves `count` floats, for the bench to say: ring "gather", "pairwise" or
  // "ring", shm "flags" or "chunked"; "" for algorithms with one way.
  virtual const char* pathFor(size_t /*count*/) const { return ""; }
};

struct AllreduceOptions {
  int ranks_per_host = 0;  // hierarchical: ranks per host; 0 = the backend's host split
};

}  // namespace ranklab
