// A text as one single-quoted shell word (a command line a test gives popen or system).
#pragma once

#include <string>

namespace ranklab::testing {

inline std::string shellQuoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace ranklab::testing
