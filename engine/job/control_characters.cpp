#include "engine/job/control_characters.h"

#include <cstdio>

#include "engine/job/utf8.h"

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

std::optional<std::string> textProblemIn(const std::string& text) {
  if (const auto bad = controlCharacterIn(text))
    return "must not contain control characters (" + *bad + ")";
  if (const auto bad = byteNotUtf8In(text)) return "is not UTF-8 (" + *bad + ")";
  return std::nullopt;
}

}  // namespace ranklab
