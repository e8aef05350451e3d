// Ring all-gather of byte payloads whose sizes differ by rank (sparse gradients): every
// rank ends with every rank's payload. Each of the n-1 steps forwards one payload to the
// right, preceded by its size (u64), so a receiver can size its buffer.
// Each rank sends the other n-1 payloads' bytes once, plus 8 bytes per step.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/communicator.h"

namespace ranklab {

class PayloadAllgather {
 public:
  explicit PayloadAllgather(Communicator& comm);

  // payloads[rank()] is this rank's; on return payloads[r] is rank r's, for every r.
  void run(std::vector<std::vector<uint8_t>>& payloads);

  // Bytes this rank sent / received in the last run(), size headers included.
  int64_t bytesSent() const { return bytes_sent_; }
  int64_t bytesReceived() const { return bytes_received_; }

 private:
  Communicator& comm_;
  int rank_;
  int world_;
  int right_;
  int left_;
  int64_t bytes_sent_ = 0;
  int64_t bytes_received_ = 0;
};

}  // namespace ranklab
