#include "comm/mpi/mpi_communicator.h"

#include <algorithm>
#include <climits>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace ranklab {

namespace {

// MPI counts are int: larger buffers move in pieces, split the same way on both sides.
constexpr size_t kMaxPiece = INT_MAX / 2;

// One isend/irecv, possibly several MPI requests for a buffer beyond kMaxPiece.
class MpiRequest : public CommRequest {
 public:
  MpiRequest(const char* operation, size_t bytes, int src)
      : operation_(operation), bytes_(bytes), src_(src) {}

  ~MpiRequest() override {
    // Never waited for: complete it so MPI never writes into a buffer that may be gone.
    if (!requests_.empty())
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  }

  std::vector<MPI_Request>& requests() { return requests_; }

  void wait() override {
    if (requests_.empty()) return;
    std::vector<MPI_Status> statuses(requests_.size());
    const int code =
        MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), statuses.data());
    requests_.clear();
    checkMpi(code, operation_);
    if (src_ < 0) return;  // a send: nothing to check
    size_t received = 0;
    for (auto& status : statuses) {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      received += static_cast<size_t>(count);
    }
    if (received != bytes_) {
      throw std::runtime_error("MPI Irecv: expected " + std::to_string(bytes_) +
                               " bytes from rank " + std::to_string(src_) + ", got " +
                               std::to_string(received));
    }
  }

 private:
  const char* operation_;
  size_t bytes_;
  int src_;  // -1 for a send
  std::vector<MPI_Request> requests_;
};

// An MPI-3 shared window over a one-host communicator, in one passive-target epoch for
// its whole life (MPI's unified model): fence() = Win_sync, Barrier, Win_sync.
// one_block: rank 0 allocates every float and each slot(r) is its block.
class MpiSharedSlots : public SharedSlots {
 public:
  MpiSharedSlots(MPI_Comm comm, size_t floats, bool one_block = false)
      : comm_(comm), floats_(floats) {
    int size = 0, rank = 0;
    MPI_Comm_size(comm_, &size);
    MPI_Comm_rank(comm_, &rank);
    // Slots start on their own cache lines, so ranks writing neighbouring slots do not collide.
    size_t stride = (floats + 15) / 16 * 16;
    if (one_block && rank != 0) stride = 0;
    void* mine = nullptr;
    checkMpi(MPI_Win_allocate_shared(static_cast<MPI_Aint>(stride * sizeof(float)), sizeof(float),
                                     MPI_INFO_NULL, comm_, &mine, &window_),
             "Win_allocate_shared");
    MPI_Win_set_errhandler(window_, MPI_ERRORS_RETURN);
    for (int r = 0; r < size; ++r) {
      MPI_Aint bytes = 0;
      int unit = 0;
      void* base = nullptr;
      checkMpi(MPI_Win_shared_query(window_, one_block ? 0 : r, &bytes, &unit, &base),
               "Win_shared_query");
      slots_.push_back(static_cast<float*>(base));
    }
    checkMpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_), "Win_lock_all");
  }

  ~MpiSharedSlots() override {
    MPI_Win_unlock_all(window_);
    // The free is collective: a rank unwinding from an error (a checkpoint it cannot
    // write) would wait there for ranks still training, and its error would never be
    // reported (the worker aborts every rank after reporting it). The process ends soon.
    if (std::uncaught_exceptions() > 0) return;
    MPI_Win_free(&window_);
  }

  float* slot(int rank) override { return slots_[rank]; }
  size_t floatsPerSlot() const override { return floats_; }

  void fence() override {
    checkMpi(MPI_Win_sync(window_), "Win_sync");
    checkMpi(MPI_Barrier(comm_), "Barrier");
    checkMpi(MPI_Win_sync(window_), "Win_sync");
  }

 private:
  MPI_Comm comm_;
  size_t floats_;
  MPI_Win window_ = MPI_WIN_NULL;
  std::vector<float*> slots_;
};

}  // namespace

void checkMpi(int code, const char* operation) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string("MPI ") + operation + ": " + std::string(text, length));
}

MpiSession::MpiSession(int* argc, char*** argv) {
  checkMpi(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &thread_level_), "Init_thread");
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

MpiCommunicator::MpiCommunicator(MPI_Comm comm, Owned) : MpiCommunicator(comm) {
  owned_ = true;
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
}

MpiCommunicator::~MpiCommunicator() {
  if (owned_) MPI_Comm_free(&comm_);
}

void MpiCommunicator::sendRecv(const void* send, size_t send_bytes, int dst, void* recv,
                               size_t recv_bytes, int src) {
  const char* out = static_cast<const char*>(send);
  char* in = static_cast<char*>(recv);
  size_t sent = 0, received = 0;
  do {
    const int sn = static_cast<int>(std::min(kMaxPiece, send_bytes - sent));
    const int rn = static_cast<int>(std::min(kMaxPiece, recv_bytes - received));
    checkMpi(MPI_Sendrecv(out + sent, sn, MPI_BYTE, dst, tags::kCollective, in + received, rn,
                          MPI_BYTE, src, tags::kCollective, comm_, MPI_STATUS_IGNORE),
             "Sendrecv");
    sent += sn;
    received += rn;
  } while (sent < send_bytes || received < recv_bytes);
}

Ticket MpiCommunicator::isend(const void* data, size_t bytes, int dst, int tag) {
  auto request = std::make_unique<MpiRequest>("Isend", bytes, -1);
  const char* out = static_cast<const char*>(data);
  size_t done = 0;
  do {
    const int n = static_cast<int>(std::min(kMaxPiece, bytes - done));
    MPI_Request r;
    checkMpi(MPI_Isend(out + done, n, MPI_BYTE, dst, tag, comm_, &r), "Isend");
    request->requests().push_back(r);
    done += n;
  } while (done < bytes);
  return request;
}

Ticket MpiCommunicator::irecv(void* data, size_t bytes, int src, int tag) {
  auto request = std::make_unique<MpiRequest>("Irecv", bytes, src);
  char* in = static_cast<char*>(data);
  size_t done = 0;
  do {
    const int n = static_cast<int>(std::min(kMaxPiece, bytes - done));
    MPI_Request r;
    checkMpi(MPI_Irecv(in + done, n, MPI_BYTE, src, tag, comm_, &r), "Irecv");
    request->requests().push_back(r);
    done += n;
  } while (done < bytes);
  return request;
}

MessageInfo MpiCommunicator::probe(int src, int tag) {
  MPI_Status status;
  checkMpi(MPI_Probe(src == kAnySource ? MPI_ANY_SOURCE : src, tag, comm_, &status), "Probe");
  int count = 0;
  checkMpi(MPI_Get_count(&status, MPI_BYTE, &count), "Get_count");
  return {status.MPI_SOURCE, static_cast<size_t>(count)};
}

void MpiCommunicator::barrier() {
  checkMpi(MPI_Barrier(comm_), "Barrier");
}

void MpiCommunicator::allreduceSumNative(float* data, size_t count) {
  for (size_t done = 0; done < count; done += kMaxPiece) {
    const int n = static_cast<int>(std::min(kMaxPiece, count - done));
    checkMpi(MPI_Allreduce(MPI_IN_PLACE, data + done, n, MPI_FLOAT, MPI_SUM, comm_), "Allreduce");
  }
}

bool MpiCommunicator::allowsCommThread() const {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  return level >= MPI_THREAD_SERIALIZED;
}

std::unique_ptr<Communicator> MpiCommunicator::adopt(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return nullptr;
  return std::unique_ptr<Communicator>(new MpiCommunicator(comm, Owned{}));
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  MPI_Comm child = MPI_COMM_NULL;
  checkMpi(MPI_Comm_split(comm_, color >= 0 ? color : MPI_UNDEFINED, key, &child), "Comm_split");
  return adopt(child);
}

std::unique_ptr<SharedSlots> MpiCommunicator::allocateSharedSlots(size_t floats_per_slot) {
  // Every rank gets the same answer: the host split is smaller than the world on all of
  // them or on none.
  auto host = splitByHost();
  if (host->size() != size_) return nullptr;
  return std::make_unique<MpiSharedSlots>(comm_, std::max<size_t>(floats_per_slot, 1));
}

std::unique_ptr<SharedSlots> MpiCommunicator::allocateSharedBlock(size_t floats) {
  auto host = splitByHost();
  if (host->size() != size_) return nullptr;
  return std::make_unique<MpiSharedSlots>(comm_, std::max<size_t>(floats, 1), true);
}

std::unique_ptr<Communicator> MpiCommunicator::splitByHost() {
  MPI_Comm child = MPI_COMM_NULL;
  checkMpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &child),
           "Comm_split_type");
  return adopt(child);
}

}  // namespace ranklab
