#include "storage/launcher_identity.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace ranklab {
namespace {

// Field 22 of /proc/PID/stat (starttime); -1 when the process is gone or a zombie.
int64_t processStart(int64_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(file, text)) return -1;
  // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(text.substr(close + 1));
  std::string state;
  fields >> state;
  if (state == "Z" || state == "X") return -1;
  std::string skipped;
  for (int field = 4; field < 22; ++field) fields >> skipped;
  int64_t start = -1;
  fields >> start;
  return fields ? start : -1;
}

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

}  // namespace

LauncherIdentity thisLauncher() {
  return processOnThisHost(getpid());
}

LauncherIdentity processOnThisHost(int64_t pid) {
  return {hostName(), pid, processStart(pid)};
}

bool launcherMayLive(const LauncherIdentity& who) {
  if (who.pid <= 0 || who.host != hostName()) return true;
  const int64_t start = processStart(who.pid);
  return start >= 0 && start == who.start;
}

}  // namespace ranklab
