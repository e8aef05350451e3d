// The all-reduce algorithms by name. Adding one: its own file, one entry below, its test.
#include "comm/collectives/allreduce_registry.h"

#include <stdexcept>
#include <utility>

#include "comm/collectives/hierarchical_allreduce.h"
#include "comm/collectives/naive_allreduce.h"
#include "comm/collectives/ring_allreduce.h"
#include "comm/collectives/shm_allreduce.h"
#include "comm/registry.h"

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
  void traceInto(CommSpans* sink) override {
    if constexpr (requires { algorithm_.traceInto(sink); }) algorithm_.traceInto(sink);
  }

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

}  // namespace

const std::vector<AllreduceAlgorithm>& allreduceRegistry() {
  static const std::vector<AllreduceAlgorithm> algorithms = {
      {"ring", "reduce-scatter then all-gather around a ring: 2(n-1)/n of the buffer per rank",
       [](Communicator& comm, const AllreduceOptions&) -> std::unique_ptr<Allreduce> {
         return std::make_unique<Adapter<RingAllreduce>>(comm);
       }},
      {.name = "mpi",
       .description = "the MPI library's own MPI_Allreduce",
       .make = [](Communicator& comm, const AllreduceOptions&) -> std::unique_ptr<Allreduce> {
         return std::make_unique<NativeAlgorithm>(comm);
       },
       .reference = true},
      {.name = "hierarchical",
       .description = "shared memory inside each host, a ring across host leaders, broadcast",
       .make = [](Communicator& comm,
                  const AllreduceOptions& options) -> std::unique_ptr<Allreduce> {
         return std::make_unique<Adapter<HierarchicalAllreduce>>(comm, options.ranks_per_host);
       },
       .takes_ranks_per_host = true,
       .even_share = false},
      {"shm", "one host: slots of an MPI-3 shared window, rank r sums chunk r, no messages",
       [](Communicator& comm, const AllreduceOptions&) -> std::unique_ptr<Allreduce> {
         return std::make_unique<ShmAdapter>(comm);
       }},
      {.name = "naive",
       .description = "every rank's whole buffer to rank 0, summed there and sent back: rank 0 "
                      "moves (n-1)x the buffer each way (to compare with)",
       .make = [](Communicator& comm, const AllreduceOptions&) -> std::unique_ptr<Allreduce> {
         return std::make_unique<Adapter<NaiveAllreduce>>(comm);
       },
       .even_share = false},
  };
  return algorithms;
}

const std::vector<std::string>& allreduceAlgorithms() {
  static const std::vector<std::string> names = namesOf(allreduceRegistry());
  return names;
}

const AllreduceAlgorithm* findAllreduce(const std::string& name) {
  for (const auto& a : allreduceRegistry())
    if (a.name == name) return &a;
  return nullptr;
}

std::string allreduceAlgorithmList() {
  std::string out;
  for (const auto& name : allreduceAlgorithms()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::unique_ptr<Allreduce> makeAllreduce(const std::string& algorithm, Communicator& comm,
                                         const AllreduceOptions& options) {
  if (const AllreduceAlgorithm* a = findAllreduce(algorithm)) return a->make(comm, options);
  throw std::invalid_argument("unknown all-reduce algorithm \"" + algorithm +
                              "\"; allowed: " + allreduceAlgorithmList());
}

}  // namespace ranklab
