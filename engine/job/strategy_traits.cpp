// Each strategy's traits. Adding a strategy: its line here and its entry in
// engine/train/strategy_registry.cpp.
#include "engine/job/strategy_traits.h"

namespace ranklab {

const std::vector<StrategyTraits>& strategyTraits() {
  static const std::vector<StrategyTraits> traits = {
      {.name = "allreduce", .all_reduces_gradient = true, .takes_algorithm = true},
      {.name = "ps-sync", .parameter_servers = true},
      {.name = "ps-async", .parameter_servers = true, .applies_each_push = true},
      {.name = "local-sgd", .takes_algorithm = true, .gradients_stay_local = true},
  };
  return traits;
}

const StrategyTraits* findStrategyTraits(const std::string& name) {
  for (const auto& t : strategyTraits())
    if (t.name == name) return &t;
  return nullptr;
}

const StrategyTraits& strategyTraitsOr(const std::string& name) {
  static const StrategyTraits unknown;
  const StrategyTraits* t = findStrategyTraits(name);
  return t ? *t : unknown;
}

std::vector<std::string> strategiesWith(bool StrategyTraits::*trait) {
  std::vector<std::string> names;
  for (const auto& t : strategyTraits())
    if (t.*trait) names.push_back(t.name);
  return names;
}

}  // namespace ranklab
