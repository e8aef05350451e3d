#include "comm/memory/thread_communicator.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace ranklab {

ThreadRendezvous::ThreadRendezvous(int world) : world_(world), barrier_(world) {
  for (int i = 0; i < world * world; ++i) mailboxes_.push_back(std::make_unique<Mailbox>());
}

ThreadCommunicator::ThreadCommunicator(ThreadRendezvous& rendezvous, int rank)
    : rendezvous_(rendezvous), rank_(rank) {}

void ThreadCommunicator::sendRecv(const void* send, size_t send_bytes, int dst, void* recv,
                                  size_t recv_bytes, int src) {
  // Post first, then wait: mailboxes are unbounded, so a ring of sends never deadlocks.
  auto& out = rendezvous_.mailbox(rank_, dst);
  {
    std::lock_guard lock(out.mutex);
    const char* bytes = static_cast<const char*>(send);
    out.messages.emplace_back(bytes, bytes + send_bytes);
  }
  out.ready.notify_all();

  auto& in = rendezvous_.mailbox(src, rank_);
  std::unique_lock lock(in.mutex);
  in.ready.wait(lock, [&] { return !in.messages.empty(); });
  std::vector<char> message = std::move(in.messages.front());
  in.messages.pop_front();
  if (message.size() != recv_bytes) {
    throw std::runtime_error("ThreadCommunicator: rank " + std::to_string(rank_) + " expected " +
                             std::to_string(recv_bytes) + " bytes from rank " +
                             std::to_string(src) + ", got " + std::to_string(message.size()));
  }
  if (recv_bytes > 0) std::memcpy(recv, message.data(), recv_bytes);
}

void ThreadCommunicator::barrier() {
  rendezvous_.barrier_.arrive_and_wait();
}

void ThreadCommunicator::allreduceSumNative(float* data, size_t count) {
  // Reference sum through shared memory: everyone adds in, then everyone reads out.
  barrier();
  if (rank_ == 0) rendezvous_.reduce_sum_.assign(count, 0.f);
  barrier();
  {
    std::lock_guard lock(rendezvous_.reduce_mutex_);
    for (size_t i = 0; i < count; ++i) rendezvous_.reduce_sum_[i] += data[i];
  }
  barrier();
  std::memcpy(data, rendezvous_.reduce_sum_.data(), count * sizeof(float));
  barrier();
}

}  // namespace ranklab
