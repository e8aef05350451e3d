#include "comm/codecs/payload_allgather.h"

#include <stdexcept>
#include <string>

namespace ranklab {

PayloadAllgather::PayloadAllgather(Communicator& comm)
    : comm_(comm),
      rank_(comm.rank()),
      world_(comm.size()),
      right_((comm.rank() + 1) % comm.size()),
      left_((comm.rank() + comm.size() - 1) % comm.size()) {}

void PayloadAllgather::run(std::vector<std::vector<uint8_t>>& payloads) {
  bytes_sent_ = bytes_received_ = 0;
  if (payloads.size() != static_cast<size_t>(world_)) {
    throw std::invalid_argument("PayloadAllgather: " + std::to_string(payloads.size()) +
                                " payload slots for a world of " + std::to_string(world_));
  }
  // Step s forwards the payload of rank (rank - s) and receives that of (rank - s - 1).
  for (int s = 0; s < world_ - 1; ++s) {
    const auto& out = payloads[(rank_ - s + world_) % world_];
    auto& in = payloads[(rank_ - s - 1 + world_) % world_];
    const uint64_t out_size = out.size();
    uint64_t in_size = 0;
    comm_.sendRecv(&out_size, sizeof out_size, right_, &in_size, sizeof in_size, left_);
    in.resize(in_size);
    comm_.sendRecv(out.data(), out.size(), right_, in.data(), in.size(), left_);
    bytes_sent_ += static_cast<int64_t>(sizeof out_size + out.size());
    bytes_received_ += static_cast<int64_t>(sizeof in_size + in.size());
  }
}

}  // namespace ranklab
