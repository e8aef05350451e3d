// NCCL's part of the GPU path (device_sync.cpp picks it), behind one seam so no caller needs
// to know how ranklab was built: a build with NCCL links nccl_syncs.cpp, one without links
// nccl_syncs_stub.cpp, whose ncclBuilt() is false and whose makers throw saying so.
#pragma once

#include <memory>

#include "comm/collectives/shard_collectives.h"
#include "comm/communicator.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

bool ncclBuilt();
// One NCCL all-reduce (mean) of the GPU gradient (nccl_sync.h); `gpu`: this rank's device.
std::unique_ptr<GradientSync> makeNcclSync(Communicator& peers, int gpu);
// ZeRO's collectives on GPU buffers through NCCL (nccl_shard_collectives.h).
std::unique_ptr<ShardCollectives> makeNcclShardCollectives(Communicator& peers, int gpu);

}  // namespace ranklab
