// The version and the commit a binary was built from (written at build time by
// cmake/build_info.cmake), for `--version` and the run store.
#pragma once

#include <string>

namespace ranklab {

const char* buildVersion();  // e.g. "0.1.0"
const char* buildCommit();   // short hash, "-dirty" when built with uncommitted changes

// "NAME 0.1.0 (commit 1a2b3c4d5e6f)"
inline std::string versionLine(const std::string& program) {
  return program + " " + buildVersion() + " (commit " + buildCommit() + ")";
}

}  // namespace ranklab
