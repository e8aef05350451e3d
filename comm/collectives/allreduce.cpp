#include "comm/collectives/allreduce.h"

#include <stdexcept>
#include <utility>

#include "comm/collectives/hierarchical_allreduce.h"
#include "comm/collectives/ring_allreduce.h"
#include "comm/collectives/shm_allreduce.h"

namespace ranklab {

namespace {

// Adapts an algorithm class with run() and byte counters to the Allreduce interface.
template <class Algorithm>
class Adapter : public Allreduce {
 public:
  template <class... Args>
  explicit Adapter(Args&&... args) : algorithm_(std::forward<Args>(args)...) {}
  void run(float* data, size_t count) override { algorithm_.run(data, count); }
  int64_t bytesSent() const override { return algorithm_.bytesSent(); }
  int64_t bytesReceived() const override { return algorithm_.bytesReceived(); }

 protected:
  Algorithm& algorithm() { return algorithm_; }
  const Algorithm& algorithm() const { return algorithm_; }

 private:
  Algorithm algorithm_;
};

// shm meets the other ranks in its own first barrier, so it reports that wait itself.
class ShmAdapter : public Adapter<ShmAllreduce> {
 public:
  explicit ShmAdapter(Communicator& comm) : Adapter<ShmAllreduce>(comm) {}
  void runScaled(float* data, size_t count, float scale) override {
    algorithm().run(data, count, scale);
  }
  bool waitsForPeers() const override { return true; }
  SpanNs lastWait() const override { return algorithm().lastWait(); }
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

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

void Allreduce::runScaled(float* data, size_t count, float scale) {
  run(data, count);
  for (size_t i = 0; i < count; ++i) data[i] *= scale;
}

const std::vector<std::string>& allreduceAlgorithms() {
  static const std::vector<std::string> names{"ring", "mpi", "hierarchical", "shm"};
  return names;
}

std::unique_ptr<Allreduce> makeAllreduce(const std::string& algorithm, Communicator& comm,
                                         const AllreduceOptions& options) {
  if (algorithm == "ring") return std::make_unique<Adapter<RingAllreduce>>(comm);
  if (algorithm == "mpi") return std::make_unique<NativeAlgorithm>(comm);
  if (algorithm == "shm") return std::make_unique<ShmAdapter>(comm);
  if (algorithm == "hierarchical") {
    return std::make_unique<Adapter<HierarchicalAllreduce>>(comm, options.ranks_per_host);
  }
  throw std::invalid_argument("unknown all-reduce algorithm \"" + algorithm +
                              "\"; allowed: " + joined(allreduceAlgorithms()));
}

}  // namespace ranklab
