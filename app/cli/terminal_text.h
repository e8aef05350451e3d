// Text from a rank or the run store on its way to a terminal: control characters (an ESC
// that would recolour the screen, a NUL, a newline inside a name) shown as \xNN instead of
// acted on (issue 33, item 9).
#pragma once

#include <string>

namespace ranklab {

// `text` with every C0 control but tab, DEL and every C1 control escaped as \xNN (\u00NN
// for C1); everything else, UTF-8 included, as it is.
std::string terminalSafe(const std::string& text);

}  // namespace ranklab
