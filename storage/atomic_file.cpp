#include "storage/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ext/stdio_filebuf.h>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <vector>

namespace ranklab {

namespace {

using Writer = std::function<int64_t(std::ostream&)>;

// What is at the path now, and so how an export may reach it.
enum class Target { kAbsent, kRegular, kStream, kRefused };

Target targetAt(const std::string& path, std::string& refusal) {
  struct stat link {};
  if (lstat(path.c_str(), &link) != 0) return Target::kAbsent;
  if (S_ISREG(link.st_mode)) return Target::kRegular;
  if (S_ISFIFO(link.st_mode) || S_ISCHR(link.st_mode)) return Target::kStream;
  refusal = S_ISDIR(link.st_mode)   ? "it is a folder"
            : S_ISLNK(link.st_mode) ? "it is a symbolic link (name its target, or \"-\" for "
                                      "standard output)"
                                    : "it is not a regular file, a FIFO or a device";
  return Target::kRefused;
}

// Runs `write` on a stream over the open descriptor `fd`, which it closes.
int64_t writeToDescriptor(int fd, const Writer& write,
                          const std::function<void(const char*)>& fail) {
  int64_t written = 0;
  {
    __gnu_cxx::stdio_filebuf<char> buffer(fd, std::ios::out | std::ios::binary);
    std::ostream out(&buffer);
    written = write(out);
    out.flush();
    if (!out) fail("write failed (disk full?)");
  }  // the buffer closes fd
  return written;
}

// The process's umask, read without changing it (umask() can only be read by setting it,
// which would race with other threads creating files): /proc's "Umask:" line, else 022.
mode_t currentUmask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  }
  return 022;
}

// `path`.part-XXXXXX, created exclusively beside the target, renamed over it when whole.
int64_t writeThroughPartFile(const std::string& path, const Writer& write,
                             const std::function<void(const char*)>& fail) {
  std::string pattern = path + ".part-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) fail(std::strerror(errno));
  const std::string partial = name.data();
  // mkostemp makes it 0600: give it the mode a plain create would (0666 less the umask).
  fchmod(fd, 0666 & ~currentUmask());
  int64_t written = 0;
  try {
    written = writeToDescriptor(fd, write, fail);
  } catch (...) {
    unlink(partial.c_str());
    throw;
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    const int cause = errno;
    unlink(partial.c_str());
    fail(std::strerror(cause));
  }
  return written;
}

}  // namespace

int64_t writeFileWhole(const std::string& path, const std::string& what, const Writer& write) {
  auto fail = [&](const char* cause) {
    throw std::runtime_error(path + ": cannot write " + what + ": " + cause);
  };
  if (path == "-") {
    const int64_t written = write(std::cout);
    if (!std::cout.flush()) fail("standard output closed");
    return written;
  }
  std::string refusal;
  switch (targetAt(path, refusal)) {
    case Target::kRefused:
      fail(refusal.c_str());
      break;
    case Target::kStream: {
      // A FIFO or a device (/dev/null, a terminal): written into, never replaced.
      const int fd = open(path.c_str(), O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) fail(std::strerror(errno));
      return writeToDescriptor(fd, write, fail);
    }
    case Target::kAbsent:
    case Target::kRegular:
      break;
  }
  return writeThroughPartFile(path, write, fail);
}

}  // namespace ranklab
