// The second real account of hostile-neighbour tests (issue 57): `nobody`, uid 65534. What
// it plants (links, files) is made by a child process that has become it, as another local
// account would; tests that need it run as root and skip otherwise.
#pragma once

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

namespace ranklab::testing {

inline constexpr uid_t kNobody = 65534;

inline bool canBecomeNobody() {
  return geteuid() == 0;
}

// Runs `act` in a child process as nobody; true when it returned true there.
inline bool asNobody(const std::function<bool()>& act) {
  const pid_t child = fork();
  if (child == 0) {
    const bool done = setgid(kNobody) == 0 && setuid(kNobody) == 0 && act();
    _exit(done ? 0 : 1);
  }
  int status = 0;
  return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

// A symbolic link at `link` to `target`, made by nobody.
inline bool plantLinkAsNobody(const std::filesystem::path& target,
                              const std::filesystem::path& link) {
  return asNobody([&] { return symlink(target.c_str(), link.c_str()) == 0; });
}

// A folder another account can write into as /tmp is (1777), inside `parent` (made
// traversable for nobody).
inline std::filesystem::path sharedFolderIn(const std::filesystem::path& parent) {
  std::filesystem::permissions(parent, std::filesystem::perms::owner_all |
                                           std::filesystem::perms::group_exec |
                                           std::filesystem::perms::others_exec);
  const auto shared = parent / "shared";
  std::filesystem::create_directory(shared);
  chmod(shared.c_str(), 01777);
  return shared;
}

// A root-owned file another account must never see changed: `text`, mode 0600.
inline std::filesystem::path victimFile(const std::filesystem::path& folder,
                                        const std::string& text = "root's own\n") {
  const auto path = folder / "victim";
  std::ofstream(path) << text;
  chmod(path.c_str(), 0600);
  return path;
}

inline std::string contentsOf(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The permission bits, not following a link.
inline mode_t modeOf(const std::filesystem::path& path) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) return 0;
  return info.st_mode & 07777;
}

}  // namespace ranklab::testing
