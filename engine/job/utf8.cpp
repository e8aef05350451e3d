#include "engine/job/utf8.h"

#include <cstdio>

namespace ranklab {

size_t utf8SequenceAt(const uint8_t* bytes, size_t size, size_t i) {
  const uint8_t lead = bytes[i];
  const size_t length = lead < 0x80                    ? 1
                        : lead >= 0xc2 && lead <= 0xdf ? 2
                        : lead >= 0xe0 && lead <= 0xef ? 3
                        : lead >= 0xf0 && lead <= 0xf4 ? 4
                                                       : 0;
  if (length == 0 || i + length > size) return 0;
  for (size_t k = 1; k < length; ++k)
    if ((bytes[i + k] & 0xc0) != 0x80) return 0;
  if (length == 1) return 1;
  // Overlong three- and four-byte forms, surrogates, and code points past U+10FFFF.
  const uint8_t second = bytes[i + 1];
  if ((lead == 0xe0 && second < 0xa0) || (lead == 0xed && second > 0x9f) ||
      (lead == 0xf0 && second < 0x90) || (lead == 0xf4 && second > 0x8f))
    return 0;
  return length;
}

namespace {

const uint8_t* bytesOf(const std::string& text) {
  return reinterpret_cast<const uint8_t*>(text.data());
}

std::string hexByte(uint8_t b) {
  char code[8];
  std::snprintf(code, sizeof code, "\\x%02x", b);
  return code;
}

}  // namespace

std::optional<std::string> byteNotUtf8In(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8SequenceAt(bytesOf(text), text.size(), i);
    if (n == 0) return hexByte(bytesOf(text)[i]) + " at offset " + std::to_string(i);
    i += n;
  }
  return std::nullopt;
}

std::string withBytesNotUtf8Escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8SequenceAt(bytesOf(text), text.size(), i);
    if (n == 0) {
      out += hexByte(bytesOf(text)[i++]);
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace ranklab
