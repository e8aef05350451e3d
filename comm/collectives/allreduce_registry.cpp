// The all-reduce algorithms by name. Adding one: its own file, one entry below, its test.
#include "comm/collectives/allreduce_registry.h"

#include <algorithm>
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
  const char* pathFor(size_t count) const override {
    if constexpr (requires { algorithm_.pathFor(count); }) return algorithm_.pathFor(count);
    return "";
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

// Every rank sends 2 (n - 1) / n of the buffer: the ring's share, and mpi's as counted.
double evenShareBytes(int /*rank*/, int n, int /*ranks_per_host*/, double bytes) {
  return 2.0 * (n - 1) / n * bytes;
}
constexpr const char* kEvenShareFormula = "2(N−1)/N · S";

// Shared memory inside each host (all a single host does); across hosts the leaders run a
// ring and each rank of a host's broadcast tree sends the sum once to each of its children
// (hierarchical_allreduce.cpp): a leader ceil(log2 L) times. The last host may be short.
double hierarchicalBytes(int rank, int n, int ranks_per_host, double bytes) {
  const int per_host = ranks_per_host > 0 ? std::min(ranks_per_host, n) : n;
  const int hosts = (n + per_host - 1) / per_host;
  const int local = std::min(per_host, n - rank / per_host * per_host);  // this host's ranks
  const int me = rank % per_host;
  double sent = 2.0 * (local - 1) / local * bytes;
  if (hosts == 1) return sent;
  if (me == 0) sent += 2.0 * (hosts - 1) / hosts * bytes;
  int top = 1;
  while (top < local) top <<= 1;
  for (int mask = top >> 1; mask > 0; mask >>= 1)
    if (me % (2 * mask) == 0 && me + mask < local) sent += bytes;
  return sent;
}

double naiveBytes(int rank, int n, int /*ranks_per_host*/, double bytes) {
  return rank == 0 ? (n - 1) * bytes : bytes;
}

}  // namespace

const std::vector<AllreduceAlgorithm>& allreduceRegistry() {
  static const std::vector<AllreduceAlgorithm> algorithms = {
      {.name = "ring",
       .description = "reduce-scatter then all-gather around a ring: 2(n-1)/n of the buffer "
                      "per rank",
       .make = [](Communicator& comm, const AllreduceOptions&) -> std::unique_ptr<Allreduce> {
         return std::make_unique<Adapter<RingAllreduce>>(comm);
       },
       .shards = true,
       .bytes_sent = evenShareBytes,
       .formula = kEvenShareFormula},
      {.name = "mpi",
       .description = "the MPI library's own MPI_Allreduce",
       .make = [](Communicator& comm, const AllreduceOptions&) -> std::unique_ptr<Allreduce> {
         return std::make_unique<NativeAlgorithm>(comm);
       },
       .reference = true,
       .bytes_sent = evenShareBytes,
       .formula = kEvenShareFormula},
      {.name = "hierarchical",
       .description = "shared memory inside each host, a ring across host leaders, broadcast",
       .make = [](Communicator& comm,
                  const AllreduceOptions& options) -> std::unique_ptr<Allreduce> {
         return std::make_unique<Adapter<HierarchicalAllreduce>>(comm, options.ranks_per_host);
       },
       .takes_ranks_per_host = true,
       .even_share = false,
       .bytes_sent = hierarchicalBytes,
       .formula = "2(L−1)/L · S inside a host; with H > 1 hosts a leader adds 2(H−1)/H · S "
                  "and ⌈log₂ L⌉ · S (the broadcast tree's root)"},
      // Its bytes are those it reads from the other ranks' slots: the ring's share.
      {.name = "shm",
       .description = "one host: slots of an MPI-3 shared window, rank r sums chunk r, no "
                      "messages",
       .make = [](Communicator& comm, const AllreduceOptions&) -> std::unique_ptr<Allreduce> {
         return std::make_unique<ShmAdapter>(comm);
       },
       .bytes_sent = evenShareBytes,
       .formula = kEvenShareFormula},
      {.name = "naive",
       .description = "every rank's whole buffer to rank 0, summed there and sent back: rank 0 "
                      "moves (n-1)x the buffer each way (to compare with)",
       .make = [](Communicator& comm, const AllreduceOptions&) -> std::unique_ptr<Allreduce> {
         return std::make_unique<Adapter<NaiveAllreduce>>(comm);
       },
       .even_share = false,
       .bytes_sent = naiveBytes,
       .formula = "rank 0 (N−1) · S, the others S"},
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

std::vector<std::string> allreduceAlgorithmsWith(bool AllreduceAlgorithm::*trait) {
  std::vector<std::string> names;
  for (const auto& a : allreduceRegistry())
    if (a.*trait) names.push_back(a.name);
  return names;
}

AllreduceChoice::AllreduceChoice(const std::string& name, const AllreduceOptions& options)
    : algorithm_(findAllreduce(name)), options_(options) {
  if (algorithm_ == nullptr)
    throw std::invalid_argument("unknown all-reduce algorithm \"" + name +
                                "\"; allowed: " + allreduceAlgorithmList());
}

std::unique_ptr<Allreduce> makeAllreduce(const std::string& algorithm, Communicator& comm,
                                         const AllreduceOptions& options) {
  return AllreduceChoice(algorithm, options).make(comm);
}

}  // namespace ranklab
