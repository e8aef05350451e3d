// What each training strategy the job file can name is, apart from how it is made
// (engine/train/strategy_registry.cpp): the one list the job's checks and key relevance, the
// device's sync and the traffic formula ask, instead of comparing strategy names.
// tests/unit/registry_test.cpp fails when it and the registry name different strategies.
#pragma once

#include <string>
#include <vector>

namespace ranklab {

struct StrategyTraits {
  std::string name;
  // Every rank all-reduces its gradient each step and steps its own optimizer (allreduce):
  // what buckets, priority pieces, ZeRO, tensor slices, NCCL and shm-sharded build on.
  bool all_reduces_gradient = false;
  bool takes_algorithm = false;       // parallel.algorithm (and ranks_per_host) shape it
  bool parameter_servers = false;     // workers push to servers and pull back
  bool applies_each_push = false;     // the servers answer each push alone (staleness applies)
  bool gradients_stay_local = false;  // ranks step alone and average models every few steps
};

const std::vector<StrategyTraits>& strategyTraits();                // in the registry's order
const StrategyTraits* findStrategyTraits(const std::string& name);  // null if unknown
// An unknown name has no trait (the schema refuses it by name; rules that ask then fire).
const StrategyTraits& strategyTraitsOr(const std::string& name);
// The names of the strategies with `trait`: {"ps-sync", "ps-async"} for parameter_servers.
std::vector<std::string> strategiesWith(bool StrategyTraits::*trait);

}  // namespace ranklab
