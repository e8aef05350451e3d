// Ring all-reduce (sum, in place): reduce-scatter around the ring, then all-gather.
// Each rank sends and receives 2(n-1)/n of the buffer, whatever n is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/communicator.h"

namespace ranklab {

class RingAllreduce {
 public:
  // segment_floats: the largest piece moved in one sendRecv, so big chunks stream.
  explicit RingAllreduce(Communicator& comm, size_t segment_floats = 1 << 18);

  void run(float* data, size_t count);

  // Bytes this rank sent / received in the last run().
  int64_t bytesSent() const { return bytes_sent_; }
  int64_t bytesReceived() const { return bytes_received_; }

 private:
  // [begin, end) of chunk c when count floats are split over the ring.
  size_t chunkBegin(size_t count, int chunk) const;
  void exchange(const float* send, size_t send_count, float* recv, size_t recv_count);

  Communicator& comm_;
  int rank_;
  int world_;
  int right_;
  int left_;
  size_t segment_floats_;
  std::vector<float> incoming_;
  int64_t bytes_sent_ = 0;
  int64_t bytes_received_ = 0;
};

}  // namespace ranklab
