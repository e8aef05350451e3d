// NCCL's part of the GPU path (makeTransport picks it), behind one seam so no caller needs
// to know how ranklab was built: a build with NCCL links nccl_seam.cpp, one without links
// nccl_seam_stub.cpp, whose ncclBuilt() is false and whose maker throws saying so.
#pragma once

#include <memory>

#include "engine/train/gradient_transport.h"

namespace ranklab {

bool ncclBuilt();
// The GPU buffers carried by NCCL (nccl_transport.h); `gpu`: this rank's device.
std::unique_ptr<GradientTransport> makeNcclTransport(Communicator& group,
                                                     const DeviceMemory& memory, int gpu);

}  // namespace ranklab
