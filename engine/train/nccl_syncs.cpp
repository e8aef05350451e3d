#include "engine/train/nccl_syncs.h"

#include "engine/train/nccl_shard_collectives.h"
#include "engine/train/nccl_sync.h"

namespace ranklab {

bool ncclBuilt() {
  return true;
}

std::unique_ptr<GradientSync> makeNcclSync(Communicator& peers, int gpu) {
  return std::make_unique<NcclSync>(peers, gpu);
}

std::unique_ptr<ShardCollectives> makeNcclShardCollectives(Communicator& peers, int gpu) {
  return std::make_unique<NcclShardCollectives>(peers, gpu);
}

}  // namespace ranklab
