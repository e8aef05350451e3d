#include "launch/private_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <vector>

#include "launch/rank_watch.h"
#include "storage/private_files.h"

namespace ranklab {

namespace fs = std::filesystem;

namespace {

std::string defaultParent(const std::string& parent) {
  return parent.empty() ? fs::temp_directory_path().string() : parent;
}

// "gone" also for a zombie: a killed launcher may wait a while for its reaper.
bool processRuns(pid_t pid) {
  return processState(pid) != "gone";
}

}  // namespace

int removeStalePrivateDirs(const std::string& parent) {
  static const std::regex name(R"(ranklab-(\d+)-[A-Za-z0-9]{6})");
  int removed = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(parent, error)) {
    std::smatch match;
    const std::string base = entry.path().filename().string();
    if (!std::regex_match(base, match, name)) continue;
    struct stat info {};
    // Our own real folders only: never a link, never another account's.
    if (lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
        info.st_uid != geteuid()) {
      continue;
    }
    const pid_t pid = static_cast<pid_t>(std::stol(match[1]));
    if (pid == getpid() || processRuns(pid)) continue;
    std::error_code ignored;
    if (fs::remove_all(entry.path(), ignored) > 0) ++removed;
  }
  return removed;
}

PrivateDir::PrivateDir(const std::string& parent) {
  const std::string where = defaultParent(parent);
  removeStalePrivateDirs(where);
  const std::string pattern = where + "/ranklab-" + std::to_string(getpid()) + "-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (!mkdtemp(name.data())) {
    throw std::runtime_error(pattern +
                             ": cannot make the run's private folder: " + std::strerror(errno));
  }
  path_ = name.data();
}

PrivateDir::~PrivateDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

std::string PrivateDir::write(const std::string& name, const std::string& text) const {
  const std::string file = path_ + "/" + name;
  writeNewPrivateFile(file, text);
  return file;
}

}  // namespace ranklab
