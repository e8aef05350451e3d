// What the choice registries share ({name, description, factory} entries: all-reduce
// algorithms, codecs, strategies): their names in registry order, and a list of them for
// messages.
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

// "a, b or c": names a message offers as the choices.
inline std::string joinChoices(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

}  // namespace ranklab
