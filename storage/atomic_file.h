// Writing an export file whole or not at all: through a temporary file beside it, renamed
// over the target only when every byte was written.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace ranklab {

// Calls `write` on a stream to `path`.part, then renames it to `path`; on any failure the
// part file is removed and the error names `path`, `what` ("the CSV export") and the cause.
// Returns what `write` returned.
int64_t writeFileWhole(const std::string& path, const std::string& what,
                       const std::function<int64_t(std::ostream&)>& write);

}  // namespace ranklab
