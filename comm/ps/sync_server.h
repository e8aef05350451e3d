// Synchronous parameter server (ps-sync): collects one push from every worker, applies
// their mean once (summed in worker order, so a run repeats itself bit for bit), then
// answers all of them. Each reply says how long it was held back
// waiting for the round's last push.
#pragma once

#include <vector>

#include "comm/ps/parameter_shard.h"

namespace ranklab {

class SyncServer {
 public:
  SyncServer(ParameterShard& shard, UpdateHandler update);
  // Serves until every worker has sent stop.
  void run();

 private:
  void closeRound();

  ParameterShard& shard_;
  UpdateHandler update_;
  std::vector<float> sum_;
  std::vector<std::vector<float>> pushes_;  // per worker: its push of this round
  std::vector<int> waiting_;                // workers whose push is in this round
  std::vector<int64_t> arrived_ns_;         // per worker: when its push of this round came
  int64_t last_push_ns_ = 0;
  double lr_ = 0;
};

}  // namespace ranklab
