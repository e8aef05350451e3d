// The all-reduce a first attempt writes, kept to be compared with (lesson 1): every rank
// sends its whole buffer to rank 0, which sums them in rank order and sends the sum back to
// each. Rank 0 sends and receives (n-1) times the buffer, every other rank once: the
// bottleneck ring all-reduce removes (2(n-1)/n of the buffer on every rank).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/communicator.h"

namespace ranklab {

class NaiveAllreduce {
 public:
  explicit NaiveAllreduce(Communicator& comm) : comm_(comm) {}

  void run(float* data, size_t count);

  // Bytes this rank sent / received in the last run().
  int64_t bytesSent() const { return bytes_sent_; }
  int64_t bytesReceived() const { return bytes_received_; }

 private:
  void reduceAtRoot(float* data, size_t count);

  Communicator& comm_;
  std::vector<float> incoming_;  // rank 0: one other rank's buffer at a time
  int64_t bytes_sent_ = 0;
  int64_t bytes_received_ = 0;
};

}  // namespace ranklab
