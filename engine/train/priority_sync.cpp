#include "engine/train/priority_sync.h"

#include <algorithm>
#include <cstdint>

#include "comm/steady_clock.h"

namespace ranklab {

PrioritySync::PrioritySync(std::unique_ptr<GradientTransport> transport,
                           const AllreduceChoice& algorithm, size_t piece_bytes,
                           size_t credit_bytes)
    : transport_(std::move(transport)),
      comm_(transport_->group()),
      memory_(transport_->memory()),
      allreduce_(transport_->allreduce(algorithm)),
      piece_floats_(std::max<size_t>(1, piece_bytes / sizeof(float))),
      credit_bytes_(credit_bytes) {
  if (comm_.size() > 1 && comm_.allowsCommThread()) thread_ = std::make_unique<CommThread>();
}

// The thread's tasks use the members below it: it goes first.
PrioritySync::~PrioritySync() {
  thread_.reset();
}

void PrioritySync::start(float* /*params*/, size_t count) {
  makePieces(count);
}

void PrioritySync::makePieces(size_t count) {
  pieces_.clear();
  // Cut from the end, as fifo's buckets are: the same pieces, the same sums.
  for (size_t end = count; end > 0;) {
    const size_t begin = end > piece_floats_ ? end - piece_floats_ : 0;
    pieces_.push_back({begin, end, static_cast<int>(pieces_.size())});
    end = begin;
  }
}

void PrioritySync::traceSpans(CommSpans* sink) {
  std::lock_guard lock(mutex_);
  trace_ = sink;
}

void PrioritySync::beginStep(double lr) {
  std::unique_lock lock(mutex_);
  // Forward waited for every layer's pieces; this covers a gradient no layer reads.
  window_.wait_ns += waitLocked(lock, [&] { return posted_bytes_ == 0 && queued_ == 0; });
  if (!order_.empty()) last_order_ = std::move(order_);
  order_.clear();
  for (auto& piece : pieces_) piece.ready = 0, piece.state = State::kFilling;
  lr_ = lr;
  first_update_ = true;
}

void PrioritySync::gradientReady(float* grads, size_t offset, size_t count) {
  std::unique_lock lock(mutex_);
  grads_ = grads;
  const size_t end = offset + count;
  for (auto& piece : pieces_) {
    const size_t lo = std::max(offset, piece.begin), hi = std::min(end, piece.end);
    if (hi <= lo || piece.state != State::kFilling) continue;
    piece.ready += hi - lo;
    if (piece.ready >= piece.end - piece.begin) piece.state = State::kQueued, ++queued_;
  }
  handOverLocked(lock, credit_bytes_);
}

SyncStats PrioritySync::sync(float* grads, size_t count) {
  if (pieces_.empty() || pieces_.front().end != count) makePieces(count);
  std::unique_lock lock(mutex_);
  grads_ = grads;
  // Whatever backward did not announce is ready now.
  for (auto& piece : pieces_)
    if (piece.state == State::kFilling) piece.state = State::kQueued, ++queued_;
  handOverLocked(lock, SIZE_MAX);
  if (failure_) std::rethrow_exception(failure_);  // a piece run here, on this thread
  return takeWindowLocked();
}

void PrioritySync::handOverLocked(std::unique_lock<std::mutex>& lock, size_t budget) {
  size_t handed = 0;
  bool device_done = false;
  for (;;) {
    Piece* next = nullptr;
    for (auto& piece : pieces_) {
      if (piece.state == State::kQueued && (!next || piece.begin < next->begin)) next = &piece;
    }
    if (!next) return;
    const size_t bytes = (next->end - next->begin) * sizeof(float);
    if (handed > 0 && handed + bytes > budget) return;
    handed += bytes;
    next->state = State::kPosted;
    --queued_;
    posted_bytes_ += bytes;
    order_.push_back(next->index);
    // The gradient's address goes with the task: grads_ is rewritten (under mutex_) while
    // the thread reads it.
    if (thread_) {
      // The thread reads what this thread's device work wrote (a GPU's stream: done first).
      if (!device_done) {
        memory_.synchronize();
        device_done = true;
      }
      thread_->post([this, next, grads = grads_] { run(*next, grads); });
    } else {
      lock.unlock();
      run(*next, grads_);
      lock.lock();
    }
  }
}

void PrioritySync::run(Piece& piece, float* grads) {
  try {
    const int64_t t0 = steadyNowNs();
    const size_t n = piece.end - piece.begin;
    allreduce_->runScaled(grads + piece.begin, n, 1.f / static_cast<float>(comm_.size()));
    const int64_t reduced = steadyNowNs();
    double lr;
    bool first;
    {
      std::lock_guard lock(mutex_);
      lr = lr_;
      first = first_update_;
      first_update_ = false;
    }
    if (update_) update_(grads, {piece.begin, piece.end}, lr, first);
    // Updated on the device before the piece counts as done: the forward that waits for it
    // reads it from another thread.
    memory_.synchronize();
    finished(piece, t0, reduced);
  } catch (...) {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = std::current_exception();
    changed_.notify_all();
  }
}

void PrioritySync::finished(Piece& piece, int64_t begin_ns, int64_t reduced_ns) {
  std::unique_lock lock(mutex_);
  piece.state = State::kDone;
  posted_bytes_ -= (piece.end - piece.begin) * sizeof(float);
  window_.comm_ns += steadyNowNs() - begin_ns;
  window_.bytes_tx += allreduce_->bytesSent();
  window_.bytes_raw += allreduce_->bytesSent();
  window_.bytes_rx += allreduce_->bytesReceived();
  ++window_.allreduces;
  if (trace_) {
    CommSpan span;
    span.kind = "bucket";  // a piece is a bucket sent out of order: the same views draw it
    span.part = piece.index;
    span.bytes = allreduce_->bytesSent();
    span.begin_ns = begin_ns;
    span.end_ns = reduced_ns;
    ended_spans_.push_back(span);
  }
  changed_.notify_all();
}

template <typename Done>
int64_t PrioritySync::waitLocked(std::unique_lock<std::mutex>& lock, Done done) {
  const int64_t t0 = steadyNowNs();
  changed_.wait(lock, [&] { return failure_ || done(); });
  if (failure_) std::rethrow_exception(failure_);
  return steadyNowNs() - t0;
}

void PrioritySync::awaitParameters(size_t offset, size_t count) {
  std::unique_lock lock(mutex_);
  const size_t end = offset + count;
  const int64_t waited = waitLocked(lock, [&] {
    return std::all_of(pieces_.begin(), pieces_.end(), [&](const Piece& p) {
      const bool overlaps = p.begin < end && offset < p.end;
      return !overlaps || p.state == State::kDone || p.state == State::kFilling;
    });
  });
  window_.wait_ns += waited;
  window_.inside_forward_ns += waited;
}

SyncStats PrioritySync::settle() {
  std::unique_lock lock(mutex_);
  window_.wait_ns += waitLocked(lock, [&] { return posted_bytes_ == 0 && queued_ == 0; });
  return takeWindowLocked();
}

SyncStats PrioritySync::takeWindowLocked() {
  SyncStats stats = window_;
  // What the thread did while this rank was not waiting for it ran behind its compute;
  // without a thread the pieces ran on this one, hiding nothing.
  stats.hidden_ns = thread_ ? std::max<int64_t>(0, stats.comm_ns - stats.wait_ns) : 0;
  window_ = {};
  if (trace_) trace_->insert(trace_->end(), ended_spans_.begin(), ended_spans_.end());
  ended_spans_.clear();
  return stats;
}

std::vector<int> PrioritySync::lastOrder() const {
  std::lock_guard lock(mutex_);
  return last_order_;
}

}  // namespace ranklab
