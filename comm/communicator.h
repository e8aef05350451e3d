// The narrow transport every collective is written against. Backends: MPI (comm/mpi),
// in-process threads (comm/memory). Algorithms never include a backend header.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ranklab {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Sends `send_bytes` to `dst` while receiving `recv_bytes` from `src`; returns when both
  // are done. Either size may be 0.
  virtual void sendRecv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                        int src) = 0;

  // Returns when every rank has entered.
  virtual void barrier() = 0;

  // The backend's own in-place float sum over all ranks (MPI_Allreduce for MPI).
  virtual void allreduceSumNative(float* data, size_t count) = 0;
};

}  // namespace ranklab
