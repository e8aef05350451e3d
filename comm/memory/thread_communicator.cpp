#include "comm/memory/thread_communicator.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace ranklab {

struct ThreadRendezvous::PostedRecv {
  int src;
  int tag;
  void* data;
  size_t bytes;
  bool done = false;
  std::string error;
};

namespace {

// Sends are buffered, so a send ticket is complete when it is made.
class CompletedRequest : public CommRequest {
 public:
  void wait() override {}
};

std::string sizeMismatch(int rank, size_t expected, int src, size_t got) {
  return "ThreadCommunicator: rank " + std::to_string(rank) + " expected " +
         std::to_string(expected) + " bytes from rank " + std::to_string(src) + ", got " +
         std::to_string(got);
}

// Every rank's slot in one heap block; a fence is the world's barrier, whose arrive/wait
// orders memory like a release/acquire pair.
class ThreadSharedSlots : public SharedSlots {
 public:
  ThreadSharedSlots(std::shared_ptr<float[]> block, size_t stride, size_t floats,
                    Communicator& comm)
      : block_(std::move(block)), stride_(stride), floats_(floats), comm_(comm) {}
  float* slot(int rank) override { return block_.get() + static_cast<size_t>(rank) * stride_; }
  size_t floatsPerSlot() const override { return floats_; }
  void fence() override { comm_.barrier(); }

 private:
  std::shared_ptr<float[]> block_;
  size_t stride_;
  size_t floats_;
  Communicator& comm_;
};

// Starts on a cache line, as a page-aligned MPI window would.
std::shared_ptr<float[]> cacheAlignedFloats(size_t count) {
  constexpr std::align_val_t kLine{64};
  auto* block = static_cast<float*>(::operator new(count * sizeof(float), kLine));
  return std::shared_ptr<float[]>(block, [](float* p) { ::operator delete(p, kLine); });
}

}  // namespace

// A receive posted before its message arrived; the sender fills it under the inbox lock.
class ThreadRecvRequest : public CommRequest {
 public:
  ThreadRecvRequest(ThreadRendezvous::Inbox& inbox, int rank, int src, int tag, void* data,
                    size_t bytes)
      : inbox_(inbox), rank_(rank), posted_{src, tag, data, bytes, false, {}} {}

  ~ThreadRecvRequest() override {
    // Never waited for: withdraw it so no sender writes into a buffer that may be gone.
    std::lock_guard lock(inbox_.mutex);
    if (!posted_.done) std::erase(inbox_.posted, &posted_);
  }

  // Takes the oldest matching queued message, or queues this receive. Under the inbox lock.
  void post() {
    auto& queue = inbox_.unmatched;
    auto match = std::find_if(queue.begin(), queue.end(), [&](const auto& m) {
      return m.src == posted_.src && m.tag == posted_.tag;
    });
    if (match == queue.end()) {
      inbox_.posted.push_back(&posted_);
      return;
    }
    fill(posted_, rank_, match->bytes);
    queue.erase(match);
  }

  void wait() override {
    std::unique_lock lock(inbox_.mutex);
    inbox_.ready.wait(lock, [&] { return posted_.done; });
    if (!posted_.error.empty()) throw std::runtime_error(posted_.error);
  }

  static void fill(ThreadRendezvous::PostedRecv& recv, int rank, const std::vector<char>& bytes) {
    if (bytes.size() != recv.bytes) {
      recv.error = sizeMismatch(rank, recv.bytes, recv.src, bytes.size());
    } else if (!bytes.empty()) {
      std::memcpy(recv.data, bytes.data(), bytes.size());
    }
    recv.done = true;
  }

 private:
  ThreadRendezvous::Inbox& inbox_;
  int rank_;
  ThreadRendezvous::PostedRecv posted_;
};

ThreadRendezvous::ThreadRendezvous(int world, int ranks_per_host)
    : world_(world), ranks_per_host_(ranks_per_host), barrier_(world), split_requests_(world) {
  for (int i = 0; i < world; ++i) inboxes_.push_back(std::make_unique<Inbox>());
}

ThreadCommunicator::ThreadCommunicator(ThreadRendezvous& rendezvous, int rank)
    : rendezvous_(rendezvous), rank_(rank) {}

ThreadCommunicator::ThreadCommunicator(std::shared_ptr<ThreadRendezvous> child, int rank)
    : owned_(std::move(child)), rendezvous_(*owned_), rank_(rank) {}

void ThreadCommunicator::checkPeer(int peer, const char* operation) const {
  if (peer < 0 || peer >= size()) {
    throw std::invalid_argument(std::string("ThreadCommunicator ") + operation + ": rank " +
                                std::to_string(peer) + " outside world " + std::to_string(size()));
  }
}

Ticket ThreadCommunicator::isend(const void* data, size_t bytes, int dst, int tag) {
  checkPeer(dst, "isend");
  auto& inbox = *rendezvous_.inboxes_[dst];
  const char* begin = static_cast<const char*>(data);
  {
    std::lock_guard lock(inbox.mutex);
    auto match = std::find_if(inbox.posted.begin(), inbox.posted.end(),
                              [&](const auto* p) { return p->src == rank_ && p->tag == tag; });
    if (match != inbox.posted.end()) {
      ThreadRecvRequest::fill(**match, dst, std::vector<char>(begin, begin + bytes));
      inbox.posted.erase(match);
    } else {
      inbox.unmatched.push_back({rank_, tag, std::vector<char>(begin, begin + bytes)});
    }
  }
  inbox.ready.notify_all();
  return std::make_unique<CompletedRequest>();
}

Ticket ThreadCommunicator::irecv(void* data, size_t bytes, int src, int tag) {
  checkPeer(src, "irecv");
  auto& inbox = *rendezvous_.inboxes_[rank_];
  auto request = std::make_unique<ThreadRecvRequest>(inbox, rank_, src, tag, data, bytes);
  std::lock_guard lock(inbox.mutex);
  request->post();
  return request;
}

MessageInfo ThreadCommunicator::probe(int src, int tag) {
  if (src != kAnySource) checkPeer(src, "probe");
  auto& inbox = *rendezvous_.inboxes_[rank_];
  std::unique_lock lock(inbox.mutex);
  MessageInfo info;
  inbox.ready.wait(lock, [&] {
    for (const auto& m : inbox.unmatched) {
      if (m.tag == tag && (src == kAnySource || m.src == src)) {
        info = {m.src, m.bytes.size()};
        return true;
      }
    }
    return false;
  });
  return info;
}

void ThreadCommunicator::sendRecv(const void* send, size_t send_bytes, int dst, void* recv,
                                  size_t recv_bytes, int src) {
  // The send is buffered, so posting it first never deadlocks a ring.
  isend(send, send_bytes, dst, tags::kCollective);
  irecv(recv, recv_bytes, src, tags::kCollective)->wait();
}

void ThreadCommunicator::barrier() {
  rendezvous_.barrier_.arrive_and_wait();
}

void ThreadCommunicator::allreduceSumNative(float* data, size_t count) {
  // Reference sum through shared memory: everyone posts its addend, then everyone adds them
  // in rank order (not arrival order), so the sum is the same bits on every run.
  barrier();
  if (rank_ == 0) rendezvous_.reduce_parts_.assign(static_cast<size_t>(size()), {});
  barrier();
  rendezvous_.reduce_parts_[static_cast<size_t>(rank_)].assign(data, data + count);
  barrier();
  for (size_t i = 0; i < count; ++i) {
    float sum = 0.f;
    for (const auto& part : rendezvous_.reduce_parts_) sum += part[i];
    data[i] = sum;
  }
  barrier();
}

std::unique_ptr<Communicator> ThreadCommunicator::split(int color, int key) {
  const int64_t generation = splits_++;
  {
    std::lock_guard lock(rendezvous_.split_mutex_);
    rendezvous_.split_requests_[rank_] = {color, key};
  }
  barrier();
  std::vector<std::pair<int, int>> members;  // (key, rank) of my color
  std::shared_ptr<ThreadRendezvous> child;
  {
    std::lock_guard lock(rendezvous_.split_mutex_);
    for (int r = 0; r < size(); ++r) {
      const auto [c, k] = rendezvous_.split_requests_[r];
      if (color >= 0 && c == color) members.emplace_back(k, r);
    }
    if (color >= 0) {
      auto& slot = rendezvous_.split_children_[{generation, color}];
      if (!slot) slot = std::make_shared<ThreadRendezvous>(static_cast<int>(members.size()));
      child = slot;
    }
  }
  barrier();  // every member holds its child world; the requests may be reused
  if (rank_ == 0) {
    std::lock_guard lock(rendezvous_.split_mutex_);
    std::erase_if(rendezvous_.split_children_,
                  [&](const auto& entry) { return entry.first.first == generation; });
  }
  if (color < 0) return nullptr;
  std::sort(members.begin(), members.end());
  const auto me = std::find_if(members.begin(), members.end(),
                               [&](const auto& member) { return member.second == rank_; });
  const int new_rank = static_cast<int>(me - members.begin());
  return std::unique_ptr<Communicator>(new ThreadCommunicator(std::move(child), new_rank));
}

std::unique_ptr<SharedSlots> ThreadCommunicator::allocateSharedSlots(size_t floats_per_slot) {
  // Slots start on their own cache lines, so ranks writing neighbouring slots do not collide.
  return sharedSlots((floats_per_slot + 15) / 16 * 16, floats_per_slot);
}

std::unique_ptr<SharedSlots> ThreadCommunicator::allocateSharedBlock(size_t floats) {
  return sharedSlots(0, floats);
}

std::unique_ptr<SharedSlots> ThreadCommunicator::sharedSlots(size_t stride, size_t floats) {
  const int per_host = rendezvous_.ranksPerHost();
  if (per_host > 0 && per_host < size()) return nullptr;  // pretend hosts share nothing
  if (rank_ == 0) {
    std::lock_guard lock(rendezvous_.shared_mutex_);
    rendezvous_.shared_block_ = cacheAlignedFloats(std::max<size_t>(stride * size(), floats));
  }
  barrier();
  std::shared_ptr<float[]> block;
  {
    std::lock_guard lock(rendezvous_.shared_mutex_);
    block = rendezvous_.shared_block_;
  }
  barrier();  // every rank holds the block; the rendezvous may let go of it
  if (rank_ == 0) {
    std::lock_guard lock(rendezvous_.shared_mutex_);
    rendezvous_.shared_block_.reset();
  }
  return std::make_unique<ThreadSharedSlots>(std::move(block), stride, floats, *this);
}

std::unique_ptr<Communicator> ThreadCommunicator::splitByHost() {
  const int per_host = rendezvous_.ranksPerHost();
  return split(per_host > 0 ? rank_ / per_host : 0, rank_);
}

}  // namespace ranklab
