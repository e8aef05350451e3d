// Writing an export file whole or not at all: through a temporary file beside it, renamed
// over the target only when every byte was written. A target that is not a regular file is
// never replaced: "-" is standard output, a FIFO or a character device is written into as
// it is, anything else (a folder, a symbolic link, a socket) is refused.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace ranklab {

// Calls `write` on a stream to a new file beside `path` (created exclusively, never through
// a symbolic link), then renames it to `path`; on any failure the part file is removed and
// the error names `path`, `what` ("the CSV export") and the cause. "-", a FIFO and a
// character device are written directly. Returns what `write` returned.
int64_t writeFileWhole(const std::string& path, const std::string& what,
                       const std::function<int64_t(std::ostream&)>& write);

}  // namespace ranklab
