#include "app/cli/terminal_text.h"

#include <cstdio>

namespace ranklab {

std::string terminalSafe(const std::string& text) {
  std::string safe;
  safe.reserve(text.size());
  char escaped[8];
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      safe += escaped;
    } else if (c == 0xc2 && i + 1 < text.size() &&
               (static_cast<unsigned char>(text[i + 1]) & 0xe0) == 0x80) {
      // U+0080..U+009F in UTF-8: C1 controls (CSI among them), which terminals obey.
      std::snprintf(escaped, sizeof escaped, "\\u00%02x", static_cast<unsigned char>(text[++i]));
      safe += escaped;
    } else {
      safe += text[i];
    }
  }
  return safe;
}

}  // namespace ranklab
