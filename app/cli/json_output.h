// The CLI's --json documents: valid JSON whatever bytes the store holds. A name taken from a
// file's bytes (an imported trace's file name) may not be UTF-8, and one such name must not
// make every `runs list --json` fail (issue 57, item 14): its stray bytes are written \xNN
// and each place that was escaped is said on standard error.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ranklab {

// `doc` with every string (and key) that is not UTF-8 rewritten by withBytesNotUtf8Escaped;
// the JSON paths of those rewritten ("[3].name") are added to `escaped`.
nlohmann::json withTextMadeUtf8(const nlohmann::json& doc, std::vector<std::string>& escaped);

// Prints `doc` indented by two and a newline to `out`, escaped as above, and a note naming
// each escaped place to `notes`.
void printJson(std::ostream& out, const nlohmann::json& doc, std::ostream& notes);

}  // namespace ranklab
