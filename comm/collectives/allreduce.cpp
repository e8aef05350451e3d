#include "comm/collectives/allreduce.h"

#include <stdexcept>

#include "comm/collectives/ring_allreduce.h"

namespace ranklab {

namespace {

class RingAlgorithm : public Allreduce {
 public:
  explicit RingAlgorithm(Communicator& comm) : ring_(comm) {}
  void run(float* data, size_t count) override { ring_.run(data, count); }
  int64_t bytesSent() const override { return ring_.bytesSent(); }
  int64_t bytesReceived() const override { return ring_.bytesReceived(); }

 private:
  RingAllreduce ring_;
};

class NativeAlgorithm : public Allreduce {
 public:
  explicit NativeAlgorithm(Communicator& comm) : comm_(comm) {}
  void run(float* data, size_t count) override {
    comm_.allreduceSumNative(data, count);
    const int n = comm_.size();
    bytes_ = n == 1 ? 0 : static_cast<int64_t>(2.0 * (n - 1) / n * count * sizeof(float));
  }
  int64_t bytesSent() const override { return bytes_; }
  int64_t bytesReceived() const override { return bytes_; }

 private:
  Communicator& comm_;
  int64_t bytes_ = 0;
};

}  // namespace

std::unique_ptr<Allreduce> makeAllreduce(const std::string& algorithm, Communicator& comm) {
  if (algorithm == "ring") return std::make_unique<RingAlgorithm>(comm);
  if (algorithm == "mpi") return std::make_unique<NativeAlgorithm>(comm);
  throw std::invalid_argument("unknown all-reduce algorithm \"" + algorithm +
                              "\"; allowed: ring, mpi");
}

}  // namespace ranklab
