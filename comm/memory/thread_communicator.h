// In-process transport: N ranks as threads sharing one rendezvous, for tests of the
// collectives without MPI. Messages are copied through per-pair mailboxes.
#pragma once

#include <barrier>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/communicator.h"

namespace ranklab {

// Shared by the threads of one in-memory world.
class ThreadRendezvous {
 public:
  explicit ThreadRendezvous(int world);
  int world() const { return world_; }

 private:
  friend class ThreadCommunicator;
  struct Mailbox {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<std::vector<char>> messages;
  };
  Mailbox& mailbox(int src, int dst) { return *mailboxes_[src * world_ + dst]; }

  int world_;
  std::vector<std::unique_ptr<Mailbox>> mailboxes_;
  std::barrier<> barrier_;
  std::mutex reduce_mutex_;
  std::vector<float> reduce_sum_;
};

class ThreadCommunicator : public Communicator {
 public:
  ThreadCommunicator(ThreadRendezvous& rendezvous, int rank);

  int rank() const override { return rank_; }
  int size() const override { return rendezvous_.world(); }
  void sendRecv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                int src) override;
  void barrier() override;
  void allreduceSumNative(float* data, size_t count) override;

 private:
  ThreadRendezvous& rendezvous_;
  int rank_;
};

}  // namespace ranklab
