// What the choice registries share ({name, description, factory} entries: all-reduce
// algorithms, codecs, strategies): their names in registry order.
#pragma once

#include <string>
#include <vector>

namespace ranklab {

template <class Entry>
std::vector<std::string> namesOf(const std::vector<Entry>& registry) {
  std::vector<std::string> names;
  for (const Entry& entry : registry) names.push_back(entry.name);
  return names;
}

}  // namespace ranklab
