#include "engine/job/control_characters.h"

#include <cstdio>

namespace ranklab {

std::optional<std::string> controlCharacterIn(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "\\x%02x", c);
      return std::string(code) + " at offset " + std::to_string(i);
    }
  }
  return std::nullopt;
}

}  // namespace ranklab
