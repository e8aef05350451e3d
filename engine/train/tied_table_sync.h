// A GPT's token table under a pipeline (Megatron's embedding group): the first stage's
// embedding ("embed.token") and the last stage's copy in its head ("lm_head.weight") each
// add the other's gradient (after the data-parallel sum, or before ZeRO's reduce-scatter),
// so the two copies, drawn equal, stay equal through every update.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "engine/model/device_memory.h"
#include "engine/model/network.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

class TiedTableSync {
 public:
  // For this rank's stage of a pipeline (`stages`, ordered by stage): null unless it holds
  // one end of the tie alone.
  static std::unique_ptr<TiedTableSync> make(const Network& stage, Communicator& stages);
  TiedTableSync(size_t offset, size_t count, int peer, Communicator& stages)
      : offset_(offset), count_(count), peer_(peer), stages_(stages) {}
  // The table's gradient in `stage` (in its flat gradient or, under ZeRO 2 and 3, in the
  // buffers held for it; `device`'s memory) plus the other end's: its time and its message.
  SyncStats sum(Network& stage, const DeviceMemory& device);

 private:
  size_t offset_, count_;  // the table's floats in the stage's flat gradient
  int peer_;               // the other end's stage
  Communicator& stages_;
  std::vector<float> mine_, theirs_;
};

}  // namespace ranklab
