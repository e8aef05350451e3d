// Text from a rank, a file or the run store on its way to a terminal: control characters (an
// ESC that would recolour the screen, a NUL, a newline inside a name) shown as \xNN instead of
// acted on (issue 33, item 9). Fields are escaped where they are printed (terminalSafe), and
// standard output and error escape whatever a field-level call missed (issue 57, item 13).
#pragma once

#include <iosfwd>
#include <memory>
#include <streambuf>
#include <string>

namespace ranklab {

// `text` with every C0 control but tab, DEL and every C1 control escaped as \xNN (\u00NN
// for C1); everything else, UTF-8 included, as it is.
std::string terminalSafe(const std::string& text);

// A stream buffer that passes text on to `target` with the controls terminalSafe escapes
// escaped, but newlines and tabs kept: lines are the CLI's own, their bytes may not be.
class EscapingStreambuf : public std::streambuf {
 public:
  explicit EscapingStreambuf(std::streambuf* target) : target_(target) {}
  std::streambuf* target() const { return target_; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* text, std::streamsize count) override;
  int sync() override;

 private:
  bool put(unsigned char c);
  std::streambuf* target_;
  bool pending_c2_ = false;  // a 0xC2 seen: a C1 control if the next byte is 0x80..0x9F
};

// While alive, std::cout and std::cerr escape controls (see EscapingStreambuf); the old
// buffers come back when it ends. `main` holds one.
class EscapedStandardStreams {
 public:
  EscapedStandardStreams();
  ~EscapedStandardStreams();
  EscapedStandardStreams(const EscapedStandardStreams&) = delete;
  EscapedStandardStreams& operator=(const EscapedStandardStreams&) = delete;

 private:
  std::unique_ptr<EscapingStreambuf> out_, err_;
};

// While alive, std::cout writes its bytes unchanged unless it is a terminal: a data export
// to "-" piped into a file keeps every byte; on a screen it is escaped like the rest.
class RawStdoutUnlessTerminal {
 public:
  RawStdoutUnlessTerminal();
  ~RawStdoutUnlessTerminal();
  RawStdoutUnlessTerminal(const RawStdoutUnlessTerminal&) = delete;
  RawStdoutUnlessTerminal& operator=(const RawStdoutUnlessTerminal&) = delete;

 private:
  std::streambuf* escaped_ = nullptr;
};

}  // namespace ranklab
