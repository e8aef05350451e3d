#include "comm/collectives/naive_allreduce.h"

#include "comm/collectives/sum_into.h"

namespace ranklab {

void NaiveAllreduce::run(float* data, size_t count) {
  const int n = comm_.size();
  const int64_t bytes = static_cast<int64_t>(count * sizeof(float));
  bytes_sent_ = bytes_received_ = 0;
  if (n == 1) return;
  if (comm_.rank() == 0) {
    reduceAtRoot(data, count);
    std::vector<Ticket> sends;  // the sum to every other rank at once
    for (int r = 1; r < n; ++r)
      sends.push_back(comm_.isend(data, count * sizeof(float), r, tags::kCollective));
    for (Ticket& send : sends) send->wait();
    bytes_sent_ = bytes_received_ = (n - 1) * bytes;
    return;
  }
  comm_.isend(data, count * sizeof(float), 0, tags::kCollective)->wait();
  comm_.irecv(data, count * sizeof(float), 0, tags::kCollective)->wait();
  bytes_sent_ = bytes_received_ = bytes;
}

// Rank 1's buffer, then rank 2's, ...: the same order, so the same bits, every run.
void NaiveAllreduce::reduceAtRoot(float* data, size_t count) {
  incoming_.resize(count);
  for (int r = 1; r < comm_.size(); ++r) {
    comm_.irecv(incoming_.data(), count * sizeof(float), r, tags::kCollective)->wait();
    sumInto(data, incoming_.data(), count);
  }
}

}  // namespace ranklab
