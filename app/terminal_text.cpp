#include "app/terminal_text.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace ranklab {

namespace {

bool isC0OrDel(unsigned char c) {
  return (c < 0x20 && c != '\t') || c == 0x7f;
}
bool isC1Continuation(unsigned char c) {
  return (c & 0xe0) == 0x80;
}

std::string escapedByte(const char* format, unsigned char c) {
  char escaped[8];
  std::snprintf(escaped, sizeof escaped, format, c);
  return escaped;
}

}  // namespace

std::string terminalSafe(const std::string& text) {
  std::string safe;
  safe.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (isC0OrDel(c)) {
      safe += escapedByte("\\x%02x", c);
    } else if (c == 0xc2 && i + 1 < text.size() &&
               isC1Continuation(static_cast<unsigned char>(text[i + 1]))) {
      // U+0080..U+009F in UTF-8: C1 controls (CSI among them), which terminals obey.
      safe += escapedByte("\\u00%02x", static_cast<unsigned char>(text[++i]));
    } else {
      safe += text[i];
    }
  }
  return safe;
}

bool EscapingStreambuf::put(unsigned char c) {
  auto emit = [&](const std::string& s) {
    return target_->sputn(s.data(), static_cast<std::streamsize>(s.size())) ==
           static_cast<std::streamsize>(s.size());
  };
  if (pending_c2_) {
    pending_c2_ = false;
    if (isC1Continuation(c)) return emit(escapedByte("\\u00%02x", c));
    if (target_->sputc(static_cast<char>(0xc2)) == traits_type::eof()) return false;
  }
  if (c == 0xc2) {
    pending_c2_ = true;
    return true;
  }
  if (c != '\n' && isC0OrDel(c)) return emit(escapedByte("\\x%02x", c));
  return target_->sputc(static_cast<char>(c)) != traits_type::eof();
}

EscapingStreambuf::int_type EscapingStreambuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  return put(static_cast<unsigned char>(traits_type::to_char_type(c))) ? c : traits_type::eof();
}

std::streamsize EscapingStreambuf::xsputn(const char* text, std::streamsize count) {
  for (std::streamsize i = 0; i < count; ++i)
    if (!put(static_cast<unsigned char>(text[i]))) return i;
  return count;
}

// A lone 0xC2 held back at a flush is not a control: it goes out as it is.
int EscapingStreambuf::sync() {
  if (pending_c2_) {
    pending_c2_ = false;
    if (target_->sputc(static_cast<char>(0xc2)) == traits_type::eof()) return -1;
  }
  return target_->pubsync();
}

EscapedStandardStreams::EscapedStandardStreams()
    : out_(std::make_unique<EscapingStreambuf>(std::cout.rdbuf())),
      err_(std::make_unique<EscapingStreambuf>(std::cerr.rdbuf())) {
  std::cout.rdbuf(out_.get());
  std::cerr.rdbuf(err_.get());
}

EscapedStandardStreams::~EscapedStandardStreams() {
  std::cout.flush();
  std::cerr.flush();
  std::cout.rdbuf(out_->target());
  std::cerr.rdbuf(err_->target());
}

RawStdoutUnlessTerminal::RawStdoutUnlessTerminal() {
  auto* escaping = dynamic_cast<EscapingStreambuf*>(std::cout.rdbuf());
  if (!escaping || isatty(STDOUT_FILENO)) return;
  std::cout.flush();
  escaped_ = escaping;
  std::cout.rdbuf(escaping->target());
}

RawStdoutUnlessTerminal::~RawStdoutUnlessTerminal() {
  if (!escaped_) return;
  std::cout.flush();
  std::cout.rdbuf(escaped_);
}

}  // namespace ranklab
