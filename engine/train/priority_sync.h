// Synchronous data parallel with priority-scheduled communication (parallel.comm_schedule =
// "priority"; ByteScheduler, P3). The gradient is cut into pieces of partition_kb, from the
// last layer backwards. Each time backward finishes a layer, the pieces it completed queue,
// and up to credit_kb of the queue goes to the communication thread, earliest layer first
// (a piece handed over can no longer be overtaken); after backward the rest go, earliest
// layer first. The order follows backward's announcements alone, so every rank runs the
// same all-reduces in the same order without a message (ByteScheduler's dynamic credit,
// refilled as pieces finish, would need a coordinator to agree on it: Horovod's rank 0).
// Each piece is updated by the optimizer as its all-reduce ends, on that thread, and sync()
// does not wait for them: the next forward waits for each layer's own pieces
// (awaitParameters), so the first layers compute while the last ones still move. The same
// pieces, sums and updates as "fifo" with bucket_kb = partition_kb: bit-equal parameters.
// Each piece crosses ranks over the transport (on a GPU: its host copies) and is updated
// where the model's memory is.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/collectives/allreduce_registry.h"
#include "engine/train/comm_thread.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/gradient_transport.h"

namespace ranklab {

class PrioritySync : public GradientSync, public PieceUpdates {
 public:
  // credit_bytes: handed over at each of backward's announcements (at least one piece).
  PrioritySync(std::unique_ptr<GradientTransport> transport, const AllreduceChoice& algorithm,
               size_t piece_bytes, size_t credit_bytes);
  ~PrioritySync() override;

  Communicator& peers() override { return comm_; }
  void start(float* params, size_t count) override;
  void beginStep(double lr) override;
  void gradientReady(float* grads, size_t offset, size_t count) override;
  SyncStats sync(float* grads, size_t count) override;
  bool updatesParameters() const override { return true; }
  PieceUpdates* pieceUpdates() override { return this; }
  void setPieceUpdate(PieceUpdateFn update) override { update_ = std::move(update); }
  void awaitParameters(size_t offset, size_t count) override;
  SyncStats settle() override;
  void refresh(float* /*params*/, size_t /*count*/) override { settle(); }
  void finish() override { settle(); }
  void traceSpans(CommSpans* sink) override;
  size_t bufferBytesHeld() const override { return transport_->hostBytesHeld(); }

  // The pieces of the last whole step in the order they were handed to the thread, by
  // Piece::index (0 = the gradient's end): what the schedule did, for tests.
  std::vector<int> lastOrder() const;

 private:
  enum class State { kFilling, kQueued, kPosted, kDone };
  struct Piece {
    size_t begin = 0, end = 0;
    int index = 0;  // 0 = the gradient's end (the last layer's, the first backward fills)
    size_t ready = 0;
    State state = State::kFilling;
  };
  void makePieces(size_t count);
  // Under mutex_: hands queued pieces to the thread, earliest layer first, up to `budget`
  // bytes (at least one piece).
  void handOverLocked(std::unique_lock<std::mutex>& lock, size_t budget);
  // On the communication thread: the piece's all-reduce and update.
  void run(Piece& piece, float* grads);
  void finished(Piece& piece, int64_t begin_ns, int64_t reduced_ns);
  // Under mutex_: waits until `done` holds; rethrows a piece's failure.
  template <typename Done>
  int64_t waitLocked(std::unique_lock<std::mutex>& lock, Done done);
  SyncStats takeWindowLocked();

  std::unique_ptr<GradientTransport> transport_;
  Communicator& comm_;
  const DeviceMemory& memory_;
  std::unique_ptr<Allreduce> allreduce_;
  size_t piece_floats_;
  size_t credit_bytes_;
  float* grads_ = nullptr;  // the step's gradient (under mutex_)
  PieceUpdateFn update_;
  std::unique_ptr<CommThread> thread_;  // null: pieces run on the caller's thread

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Piece> pieces_;
  double lr_ = 0.0;
  bool first_update_ = true;  // the step's optimizer count is still to take
  size_t posted_bytes_ = 0;   // handed to the thread and not yet done
  int queued_ = 0;            // pieces ready and not yet handed over
  std::vector<int> order_, last_order_;
  std::exception_ptr failure_;
  SyncStats window_;            // what ended since the last sync()
  CommSpans* trace_ = nullptr;  // the step's sink; pieces reach it at sync() and settle()
  std::vector<CommSpan> ended_spans_;
};

}  // namespace ranklab
