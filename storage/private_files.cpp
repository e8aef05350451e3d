#include "storage/private_files.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

namespace ranklab {

namespace {

std::string octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Why a create at `path` failed: what is there when it exists, else the system's words.
std::string createFailure(const std::string& path, int cause) {
  struct stat there {};
  // A link is said as one whatever the errno (ELOOP, EEXIST, or EACCES in a sticky folder).
  if (lstat(path.c_str(), &there) == 0 && S_ISLNK(there.st_mode))
    return "it is a symbolic link; ranklab will not write through it";
  if (cause == EEXIST) return "it exists already (ranklab writes only a file it makes new)";
  return cause == EACCES ? "permission denied" : std::strerror(cause);
}

PrivateFileError fileError(const std::string& path, const std::string& why) {
  return PrivateFileError(path + ": cannot write: " + why);
}

bool writeAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// "" or why the folder open at `fd` may not hold ranklab's private files.
std::string privateFolderReason(const struct stat& info) {
  if (!S_ISDIR(info.st_mode)) return "is not a folder";
  if (info.st_uid != geteuid()) return ownedByAnotherText(info.st_uid);
  if (info.st_mode & S_IWOTH) return "writable by others (mode " + octal(info.st_mode) + ")";
  if (info.st_mode & S_IWGRP) return "writable by its group (mode " + octal(info.st_mode) + ")";
  return "";
}

}  // namespace

std::string accountName(uid_t uid) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  std::vector<char> buffer(4096);
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found)
    return found->pw_name;
  return "uid " + std::to_string(uid);
}

std::string accountText(uid_t uid) {
  const std::string name = accountName(uid);
  return name.rfind("uid ", 0) == 0 ? name : "uid " + std::to_string(uid) + " (" + name + ")";
}

std::string ownedByAnotherText(uid_t owner) {
  return "owned by " + accountText(owner) + ", not by this account (" + accountName(geteuid()) +
         ")";
}

void writeNewPrivateFile(const std::string& path, const std::string& bytes, bool durable) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw fileError(path, createFailure(path, errno));
  const bool written = writeAll(fd, bytes) && (!durable || ::fsync(fd) == 0);
  const int cause = errno;
  if (::close(fd) != 0 || !written) {
    ::unlink(path.c_str());  // made by this call: exclusively, so it is ours
    throw fileError(path, written ? std::strerror(errno) : std::strerror(cause));
  }
}

int openPrivateLog(const std::string& path) {
  // O_NONBLOCK: a FIFO there must not hold the open; cleared once it is a regular file.
  const int flags = O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC;
  const int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) throw fileError(path, createFailure(path, errno));
  struct stat info {};
  std::string why;
  if (::fstat(fd, &info) != 0)
    why = std::strerror(errno);
  else if (!S_ISREG(info.st_mode))
    why = "it is not a regular file";
  else if (info.st_uid != geteuid())
    why = "it is " + ownedByAnotherText(info.st_uid);
  if (why.empty() && ::fcntl(fd, F_SETFL, O_APPEND) != 0) why = std::strerror(errno);
  if (!why.empty()) {
    ::close(fd);
    throw fileError(path, why);
  }
  return fd;
}

void ensurePrivateFolder(const std::string& dir, const std::string& what) {
  auto refuse = [&](const std::string& why) {
    return PrivateFileError(dir + ": cannot use it as " + what + ": " + why);
  };
  const auto parent = std::filesystem::path(dir).parent_path();
  std::error_code ignored;  // a missing parent is said by mkdir below
  if (!parent.empty()) std::filesystem::create_directories(parent, ignored);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw refuse(std::string("cannot make it: ") +
                 (errno == EACCES ? "permission denied" : std::strerror(errno)));
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0) throw refuse(std::strerror(errno));
  // Checked before any permission change: a link's target is never touched.
  if (S_ISLNK(info.st_mode)) throw refuse("is a symbolic link; ranklab will not write through it");
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw refuse(std::strerror(errno));
  std::string why = ::fstat(fd, &info) != 0 ? std::strerror(errno) : privateFolderReason(info);
  // Its own folder, made by an older ranklab or by hand: only this account enters it.
  if (why.empty() && (info.st_mode & 077) != 0 && ::fchmod(fd, 0700) != 0)
    why = std::string("cannot make it 0700: ") + std::strerror(errno);
  ::close(fd);
  if (!why.empty()) throw refuse(why);
}

std::string sharedFolderReason(const std::string& dir) {
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) return "";  // the write names what is missing
  if (!S_ISDIR(info.st_mode)) return "is not a folder";
  if (info.st_uid != geteuid() && info.st_uid != 0) return ownedByAnotherText(info.st_uid);
  if ((info.st_mode & S_ISVTX) == 0 && (info.st_mode & (S_IWGRP | S_IWOTH)))
    return std::string((info.st_mode & S_IWOTH) ? "writable by others" : "writable by its group") +
           " without the sticky bit (mode " + octal(info.st_mode) + ")";
  return "";
}

std::string notOwnFileReason(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return "";
  if (S_ISLNK(info.st_mode)) return "is a symbolic link";
  if (!S_ISREG(info.st_mode)) return "is not a regular file";
  if (info.st_uid != geteuid()) return ownedByAnotherText(info.st_uid);
  return "";
}

}  // namespace ranklab
