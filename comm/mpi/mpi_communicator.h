// Communicator over MPI_COMM_WORLD (or a given communicator).
#pragma once

#include <mpi.h>

#include "comm/communicator.h"

namespace ranklab {

// Initializes MPI on construction, finalizes on destruction (once per process). Asks for
// MPI_THREAD_SERIALIZED: a communication thread may call MPI while the main thread does not.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int threadLevel() const { return thread_level_; }

 private:
  int thread_level_ = MPI_THREAD_SINGLE;
};

class MpiCommunicator : public Communicator {
 public:
  // Borrows `comm` (MPI_COMM_WORLD by default); it is not freed.
  explicit MpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sendRecv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                int src) override;
  Ticket isend(const void* data, size_t bytes, int dst, int tag) override;
  Ticket irecv(void* data, size_t bytes, int src, int tag) override;
  MessageInfo probe(int src, int tag) override;
  void barrier() override;
  void allreduceSumNative(float* data, size_t count) override;
  std::unique_ptr<Communicator> split(int color, int key) override;
  std::unique_ptr<Communicator> splitByHost() override;
  std::unique_ptr<SharedSlots> allocateSharedSlots(size_t floats_per_slot) override;
  std::unique_ptr<SharedSlots> allocateSharedBlock(size_t floats) override;
  bool allowsCommThread() const override;

 private:
  struct Owned {};
  MpiCommunicator(MPI_Comm comm, Owned);
  std::unique_ptr<Communicator> adopt(MPI_Comm comm);

  MPI_Comm comm_;
  bool owned_ = false;  // made by split(): freed in the destructor
  int rank_ = 0;
  int size_ = 1;
};

// Throws std::runtime_error naming the MPI operation and MPI's error string.
void checkMpi(int code, const char* operation);

}  // namespace ranklab
