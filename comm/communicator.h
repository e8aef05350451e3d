// The narrow transport every collective and the parameter-server protocol are written
// against. Backends: MPI (comm/mpi), in-process threads (comm/memory). Algorithms never
// include a backend header. Byte-moving calls take a buffer and a size, so a gradient codec
// can sit in front of any of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ranklab {

// A posted non-blocking send or receive (ps-lite's ticket): wait() returns once its buffer
// may be reused (send) or holds the message (receive).
class CommRequest {
 public:
  virtual ~CommRequest() = default;
  virtual void wait() = 0;
};
using Ticket = std::unique_ptr<CommRequest>;

// Tags keep protocols on one communicator apart; each is used by one protocol only.
namespace tags {
inline constexpr int kCollective = 0;
inline constexpr int kPsRequest = 1;  // worker -> server: what it wants (comm/ps)
inline constexpr int kPsPayload = 2;  // worker -> server: the floats of a push or init
inline constexpr int kPsReply = 3;    // server -> worker: version, staleness, hold time
inline constexpr int kPsParams = 4;   // server -> worker: the shard's parameters
inline constexpr int kBench = 5;
inline constexpr int kPipeline = 6;  // activations forward, gradients backward (engine/train)
}  // namespace tags

// Memory that every rank of a one-host communicator maps: one slot per rank, all the same
// size (an MPI-3 shared window, or one heap block for ranks as threads). Any rank may read
// and write any slot; fence() orders those accesses between ranks.
class SharedSlots {
 public:
  virtual ~SharedSlots() = default;
  virtual float* slot(int rank) = 0;
  virtual size_t floatsPerSlot() const = 0;
  // Collective barrier: every rank's writes before it are seen by every rank after it.
  virtual void fence() = 0;
};

// Where a probed message comes from and how long it is.
struct MessageInfo {
  int source = -1;
  size_t bytes = 0;
};

class Communicator {
 public:
  static constexpr int kAnySource = -1;

  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Sends `send_bytes` to `dst` while receiving `recv_bytes` from `src`; returns when both
  // are done. Either size may be 0.
  virtual void sendRecv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                        int src) = 0;

  // Non-blocking point to point. Messages between one pair with one tag arrive in the order
  // they were sent; a receive must name the exact size the sender sent.
  virtual Ticket isend(const void* data, size_t bytes, int dst, int tag) = 0;
  virtual Ticket irecv(void* data, size_t bytes, int src, int tag) = 0;

  // Blocks until a message with `tag` from `src` (or kAnySource) is pending; leaves it queued.
  virtual MessageInfo probe(int src, int tag) = 0;

  // Returns when every rank has entered.
  virtual void barrier() = 0;

  // The backend's own in-place float sum over all ranks (MPI_Allreduce for MPI).
  virtual void allreduceSumNative(float* data, size_t count) = 0;

  // Collective: ranks passing the same color >= 0 form a new communicator, ordered by
  // (key, rank); a negative color takes part but gets nullptr.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;

  // Collective: the ranks that share this rank's memory (one host).
  virtual std::unique_ptr<Communicator> splitByHost() = 0;

  // Collective: `floats_per_slot` floats of shared memory per rank; nullptr (on every rank)
  // when the ranks do not all share one host's memory.
  virtual std::unique_ptr<SharedSlots> allocateSharedSlots(size_t floats_per_slot) = 0;
  // Collective: one block of `floats` every rank maps (slot(r) is that block for every r);
  // nullptr under the same condition as allocateSharedSlots.
  virtual std::unique_ptr<SharedSlots> allocateSharedBlock(size_t floats) = 0;

  // True when another thread may make the calls while this one does not (a communication
  // thread); false when the backend only allows the thread that set it up.
  virtual bool allowsCommThread() const { return true; }

  void send(const void* data, size_t bytes, int dst, int tag) {
    isend(data, bytes, dst, tag)->wait();
  }
  void recv(void* data, size_t bytes, int src, int tag) { irecv(data, bytes, src, tag)->wait(); }
};

// Waits for every ticket in order and clears the list.
inline void waitAll(std::vector<Ticket>& tickets) {
  for (auto& ticket : tickets) ticket->wait();
  tickets.clear();
}

}  // namespace ranklab
