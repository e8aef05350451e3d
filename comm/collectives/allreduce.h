// Sum all-reduce by a named algorithm, with the bytes it moved. Used by the allreduce
// strategy and `ranklab bench allreduce`: `ring` (ring_allreduce.h), `hierarchical`
// (hierarchical_allreduce.h), `mpi` (the backend's native one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"

namespace ranklab {

class Allreduce {
 public:
  virtual ~Allreduce() = default;
  virtual void run(float* data, size_t count) = 0;
  // Bytes this rank sent / received in the last run(). For `mpi` the library chooses its
  // own algorithm, so this is the ring-equivalent volume 2(n-1)/n * size.
  virtual int64_t bytesSent() const = 0;
  virtual int64_t bytesReceived() const = 0;
};

struct AllreduceOptions {
  int ranks_per_host = 0;  // hierarchical: ranks per host; 0 = the backend's host split
};

// The algorithm names makeAllreduce accepts.
const std::vector<std::string>& allreduceAlgorithms();

// Collective over `comm` (hierarchical splits it). Throws std::invalid_argument naming
// the algorithm and the allowed ones.
std::unique_ptr<Allreduce> makeAllreduce(const std::string& algorithm, Communicator& comm,
                                         const AllreduceOptions& options = {});

}  // namespace ranklab
