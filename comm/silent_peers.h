// Peers that are not there: a communicator with a rank and a size whose exchanges move
// nothing and return at once. The simulator builds a tensor slice's part and times its
// compute with it (a slice's f and g then cost nothing; their time is the transport's, which
// the calibration measures apart); a memory estimate counts a slice's part with it.
#pragma once

#include "comm/communicator.h"

namespace ranklab {

class SilentPeers : public Communicator {
 public:
  SilentPeers(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sendRecv(const void*, size_t, int, void*, size_t, int) override {}
  Ticket isend(const void*, size_t, int, int) override { return std::make_unique<Done>(); }
  Ticket irecv(void*, size_t, int, int) override { return std::make_unique<Done>(); }
  MessageInfo probe(int src, int) override { return {src, 0}; }
  void barrier() override {}
  void allreduceSumNative(float*, size_t) override {}
  std::unique_ptr<Communicator> split(int, int) override {
    return std::make_unique<SilentPeers>(0, 1);
  }
  std::unique_ptr<Communicator> splitByHost() override {
    return std::make_unique<SilentPeers>(rank_, size_);
  }
  std::unique_ptr<SharedSlots> allocateSharedSlots(size_t) override { return nullptr; }
  std::unique_ptr<SharedSlots> allocateSharedBlock(size_t) override { return nullptr; }

 private:
  struct Done : CommRequest {
    void wait() override {}
  };
  int rank_, size_;
};

}  // namespace ranklab
