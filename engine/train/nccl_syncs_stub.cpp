// A build without NCCL: device_sync.cpp asks ncclBuilt() first, so the makers are never
// reached; if they are, they say why.
#include <stdexcept>

#include "engine/train/nccl_syncs.h"

namespace ranklab {

bool ncclBuilt() {
  return false;
}

std::unique_ptr<GradientSync> makeNcclSync(Communicator& /*peers*/, int /*gpu*/) {
  throw std::logic_error("NCCL's all-reduce: this ranklab was built without NCCL");
}

std::unique_ptr<ShardCollectives> makeNcclShardCollectives(Communicator& /*peers*/, int /*gpu*/) {
  throw std::logic_error("NCCL's ZeRO collectives: this ranklab was built without NCCL");
}

}  // namespace ranklab
