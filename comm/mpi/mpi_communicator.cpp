#include "comm/mpi/mpi_communicator.h"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

namespace ranklab {

void checkMpi(int code, const char* operation) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string("MPI ") + operation + ": " + std::string(text, length));
}

MpiSession::MpiSession(int* argc, char*** argv) {
  checkMpi(MPI_Init(argc, argv), "Init");
  // Errors come back as codes so checkMpi can name them instead of aborting silently.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

MpiSession::~MpiSession() {
  MPI_Finalize();
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm) : comm_(comm) {
  checkMpi(MPI_Comm_rank(comm_, &rank_), "Comm_rank");
  checkMpi(MPI_Comm_size(comm_, &size_), "Comm_size");
}

void MpiCommunicator::sendRecv(const void* send, size_t send_bytes, int dst, void* recv,
                               size_t recv_bytes, int src) {
  // MPI counts are int: move very large buffers in pieces, same split on both sides.
  constexpr size_t kMaxPiece = INT_MAX / 2;
  const char* out = static_cast<const char*>(send);
  char* in = static_cast<char*>(recv);
  size_t sent = 0, received = 0;
  do {
    const int sn = static_cast<int>(std::min(kMaxPiece, send_bytes - sent));
    const int rn = static_cast<int>(std::min(kMaxPiece, recv_bytes - received));
    checkMpi(MPI_Sendrecv(out + sent, sn, MPI_BYTE, dst, 0, in + received, rn, MPI_BYTE, src, 0,
                          comm_, MPI_STATUS_IGNORE),
             "Sendrecv");
    sent += sn;
    received += rn;
  } while (sent < send_bytes || received < recv_bytes);
}

void MpiCommunicator::barrier() {
  checkMpi(MPI_Barrier(comm_), "Barrier");
}

void MpiCommunicator::allreduceSumNative(float* data, size_t count) {
  constexpr size_t kMaxPiece = INT_MAX / 2;
  for (size_t done = 0; done < count; done += kMaxPiece) {
    const int n = static_cast<int>(std::min(kMaxPiece, count - done));
    checkMpi(MPI_Allreduce(MPI_IN_PLACE, data + done, n, MPI_FLOAT, MPI_SUM, comm_), "Allreduce");
  }
}

}  // namespace ranklab
