// What the CLI prints from ranks and the store reaches a terminal inert (issue 33, item 9).
#include "app/terminal_text.h"

#include "app/cli/json_output.h"

#include <gtest/gtest.h>

#include <sstream>
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

// What a field-level escape missed (an error message quoting a file) is escaped on the way out;
// the CLI's own newlines and tabs stay, and a C1 control split between two writes is caught.
TEST(TerminalText, StandardStreamsEscapeWhatAFieldMissed) {
  std::ostringstream sink;
  EscapingStreambuf filter(sink.rdbuf());
  std::ostream out(&filter);
  out << "a.json: event \x1b[2J\x07 bad\n\tnext line\r"
      << "\xc2";
  out << "\x9b"
      << "31m \xc3\xa9\x7f" << std::flush;
  EXPECT_EQ(sink.str(),
            "a.json: event \\x1b[2J\\x07 bad\n\tnext line\\x0d\\u009b31m \xc3\xa9\\x7f");
  out << "\xc2" << std::flush;
  EXPECT_EQ(sink.str().back(), '\xc2') << "a lone lead byte is not held back for ever";
}

// One name of bytes that are not UTF-8 made every `runs list --json` fail (issue 57, item 14).
TEST(JsonOutput, BytesThatAreNotUtf8AreWrittenAsEscapesAndSaid) {
  const nlohmann::json doc = {{{"id", 1}, {"name", "r\xff\xfeun \xc3\xa9"}},
                              {{"id", 2}, {"name", "fine"}}};
  std::ostringstream out, notes;
  printJson(out, doc, notes);
  const nlohmann::json back = nlohmann::json::parse(out.str());
  EXPECT_EQ(back[0]["name"], "r\\xff\\xfeun \xc3\xa9");
  EXPECT_EQ(back[1]["name"], "fine");
  EXPECT_EQ(notes.str(),
            "ranklab: note: [0].name is not UTF-8: each byte that is not is written \\xNN in the "
            "JSON\n");
  std::ostringstream clean_out, no_notes;
  printJson(clean_out, back, no_notes);
  EXPECT_EQ(no_notes.str(), "");
}

}  // namespace
}  // namespace ranklab
