// Control characters in text a person gives (a job's strings, a run's new name): an ESC, a
// NUL or a newline only ever garbles a terminal or cuts a name short (issue 33, item 9).
#pragma once

#include <optional>
#include <string>

namespace ranklab {

// "\x1b at offset 3" for the first control character in `text` (tab allowed), if any.
std::optional<std::string> controlCharacterIn(const std::string& text);

// What makes `text` unfit for a name or a tag a person gives, said as the rest of a sentence:
// "must not contain control characters (\x1b at offset 0)" or "is not UTF-8 (\xff at offset
// 3)"; nothing when it is fit.
std::optional<std::string> textProblemIn(const std::string& text);

}  // namespace ranklab
