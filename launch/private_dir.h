// Files the launcher hands to its ranks (the resolved job) live in a folder only this
// account can enter: made by mkdtemp (0700) under the temp folder, each file created
// exclusively (0600, never through a symbolic link), all removed at the end, and folders a
// crashed launcher left behind removed by the next one. Another local account can neither
// predict, plant, read nor rewrite what the ranks read (issue 33, item 1).
#pragma once

#include <string>

namespace ranklab {

class PrivateDir {
 public:
  // Under `parent` (default: the system's temp folder): "ranklab-<pid>-XXXXXX". Removes
  // first the folders of launchers that have exited (removeStalePrivateDirs).
  explicit PrivateDir(const std::string& parent = "");
  ~PrivateDir();
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;

  // Writes `text` to a new file `name` inside; throws naming the path if it cannot.
  std::string write(const std::string& name, const std::string& text) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Removes from `parent` the "ranklab-<pid>-XXXXXX" folders owned by this account whose
// launcher (pid) is no longer running; leaves everything else. Returns how many it removed.
int removeStalePrivateDirs(const std::string& parent);

}  // namespace ranklab
