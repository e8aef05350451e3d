// In-process transport: N ranks as threads sharing one rendezvous, for tests of the
// collectives and the parameter server without MPI. Sends are buffered (copied into the
// receiver's inbox, or straight into a posted receive), so they complete at once.
#pragma once

#include <barrier>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "comm/communicator.h"

namespace ranklab {

// Shared by the threads of one in-memory world.
class ThreadRendezvous {
 public:
  // ranks_per_host > 0 pretends consecutive groups of that many ranks are separate hosts
  // (for splitByHost); 0 puts every rank on one host.
  explicit ThreadRendezvous(int world, int ranks_per_host = 0);
  int world() const { return world_; }
  int ranksPerHost() const { return ranks_per_host_; }

 private:
  friend class ThreadCommunicator;
  friend class ThreadRecvRequest;
  struct Message {
    int src;
    int tag;
    std::vector<char> bytes;
  };
  struct PostedRecv;
  // Messages and posted receives of one destination rank, matched in arrival/post order.
  struct Inbox {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<Message> unmatched;
    std::deque<PostedRecv*> posted;
  };

  int world_;
  int ranks_per_host_;
  std::vector<std::unique_ptr<Inbox>> inboxes_;
  std::barrier<> barrier_;
  std::vector<std::vector<float>> reduce_parts_;  // allreduceSumNative: each rank's addend
  // split(): every rank's (color, key), and the child worlds made by one split call.
  std::mutex split_mutex_;
  std::vector<std::pair<int, int>> split_requests_;
  std::map<std::pair<int64_t, int>, std::shared_ptr<ThreadRendezvous>> split_children_;
  // allocateSharedSlots(): the block rank 0 made, until every rank holds it.
  std::mutex shared_mutex_;
  std::shared_ptr<float[]> shared_block_;
};

class ThreadCommunicator : public Communicator {
 public:
  ThreadCommunicator(ThreadRendezvous& rendezvous, int rank);

  int rank() const override { return rank_; }
  int size() const override { return rendezvous_.world(); }
  void sendRecv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                int src) override;
  Ticket isend(const void* data, size_t bytes, int dst, int tag) override;
  Ticket irecv(void* data, size_t bytes, int src, int tag) override;
  MessageInfo probe(int src, int tag) override;
  void barrier() override;
  void allreduceSumNative(float* data, size_t count) override;
  std::unique_ptr<Communicator> split(int color, int key) override;
  std::unique_ptr<Communicator> splitByHost() override;
  std::unique_ptr<SharedSlots> allocateSharedSlots(size_t floats_per_slot) override;
  std::unique_ptr<SharedSlots> allocateSharedBlock(size_t floats) override;

 private:
  ThreadCommunicator(std::shared_ptr<ThreadRendezvous> child, int rank);
  void checkPeer(int peer, const char* operation) const;
  // Rank r's slot starts stride floats after rank r-1's (stride 0: one block for all).
  std::unique_ptr<SharedSlots> sharedSlots(size_t stride, size_t floats);

  std::shared_ptr<ThreadRendezvous> owned_;  // set for communicators made by split()
  ThreadRendezvous& rendezvous_;
  int rank_;
  int64_t splits_ = 0;  // split() calls so far; the same count on every rank
};

}  // namespace ranklab
