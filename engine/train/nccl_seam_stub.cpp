// A build without NCCL: makeTransport asks ncclBuilt() first, so the maker is never
// reached; if it is, it says why.
#include <stdexcept>

#include "engine/train/nccl_seam.h"

namespace ranklab {

bool ncclBuilt() {
  return false;
}

std::unique_ptr<GradientTransport> makeNcclTransport(Communicator& /*group*/,
                                                     const DeviceMemory& /*memory*/, int /*gpu*/) {
  throw std::logic_error("NCCL's transport: this ranklab was built without NCCL");
}

}  // namespace ranklab
