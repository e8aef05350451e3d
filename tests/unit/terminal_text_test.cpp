// What the CLI prints from ranks and the store reaches a terminal inert (issue 33, item 9).
#include "app/cli/terminal_text.h"

#include <gtest/gtest.h>

#include <string>

namespace ranklab {
namespace {

TEST(TerminalText, ControlCharactersAreShownNotObeyed) {
  using namespace std::string_literals;
  EXPECT_EQ(terminalSafe("\x1b[31mRED"), "\\x1b[31mRED");
  EXPECT_EQ(terminalSafe("a\nb\rc\0d"s), "a\\x0ab\\x0dc\\x00d");
  EXPECT_EQ(terminalSafe("del\x7f"), "del\\x7f");
  EXPECT_EQ(terminalSafe("csi \xc2\x9b"
                         "31m"),
            "csi \\u009b31m")
      << "a C1 control in UTF-8";
  EXPECT_EQ(terminalSafe("tab\tand UTF-8: \xc3\xa9t\xc3\xa9 \xe2\x86\x92"),
            "tab\tand UTF-8: \xc3\xa9t\xc3\xa9 \xe2\x86\x92")
      << "text a person wrote is left as it is";
}

}  // namespace
}  // namespace ranklab
