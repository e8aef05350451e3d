// Communicator over MPI_COMM_WORLD (or a given communicator).
#pragma once

#include <mpi.h>

#include "comm/communicator.h"

namespace ranklab {

// Initializes MPI on construction, finalizes on destruction (once per process).
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

class MpiCommunicator : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sendRecv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                int src) override;
  void barrier() override;
  void allreduceSumNative(float* data, size_t count) override;

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

// Throws std::runtime_error naming the MPI operation and MPI's error string.
void checkMpi(int code, const char* operation);

}  // namespace ranklab
