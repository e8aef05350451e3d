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
  // segment_floats: the largest piece moved in one message, so a chunk streams: the next
  // piece is in flight while the current one is added.
  explicit RingAllreduce(Communicator& comm, size_t segment_floats = 1 << 16);

  void run(float* data, size_t count);

  // Bytes this rank sent / received in the last run().
  int64_t bytesSent() const { return bytes_sent_; }
  int64_t bytesReceived() const { return bytes_received_; }

 private:
  struct Span {
    float* ptr;
    size_t len;
  };
  // Chunk c (mod world) when count floats are split over the ring (chunks.h).
  Span chunk(float* data, size_t count, int c) const;
  void reduceStep(const Span& out, const Span& in);
  void gatherStep(const Span& out, const Span& in);

  Communicator& comm_;
  int rank_;
  int world_;
  int right_;
  int left_;
  size_t segment_floats_;
  size_t longest_ = 0;              // floats in chunk 0 during run()
  std::vector<float> incoming_[2];  // double buffer: one piece arriving, one being added
  int64_t bytes_sent_ = 0;
  int64_t bytes_received_ = 0;
};

}  // namespace ranklab
