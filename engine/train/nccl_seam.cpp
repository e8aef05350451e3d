#include "engine/train/nccl_seam.h"

#include "engine/train/nccl_transport.h"

namespace ranklab {

bool ncclBuilt() {
  return true;
}

std::unique_ptr<GradientTransport> makeNcclTransport(Communicator& group,
                                                     const DeviceMemory& memory, int gpu) {
  return std::make_unique<NcclTransport>(group, memory, gpu);
}

}  // namespace ranklab
