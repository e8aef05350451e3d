// Which process launched a run (host, pid and the process's start time, so a reused pid is
// not taken for the launcher), and whether that process still lives.
#pragma once

#include <cstdint>
#include <string>

namespace ranklab {

struct LauncherIdentity {
  std::string host;
  int64_t pid = 0;
  int64_t start = 0;  // clock ticks after boot, field 22 of /proc/PID/stat
};

// The calling process.
LauncherIdentity thisLauncher();
// Process `pid` on this host (start -1 when it is gone).
LauncherIdentity processOnThisHost(int64_t pid);

// False when `who` runs on this host and its process has exited (or the pid now belongs to a
// process started later); true otherwise, including for another host's launcher.
bool launcherMayLive(const LauncherIdentity& who);

}  // namespace ranklab
