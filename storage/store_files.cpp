#include "storage/store_files.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "storage/private_files.h"
#include "storage/store_error.h"

namespace ranklab {

namespace {

StoreError refusal(const std::string& path, const std::string& why) {
  return StoreError(path + ": " + why);
}

// The file a link this account made points to (SQLite names the -wal after it), else `path`.
std::string resolved(const std::string& path) {
  char real[PATH_MAX];
  return ::realpath(path.c_str(), real) ? std::string(real) : path;
}

// A link at the store's name is followed only when this account made it.
void refuseForeignLink(const std::string& path) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode) || link.st_uid == geteuid())
    return;
  throw refusal(path, "is a symbolic link owned by " + accountText(link.st_uid) +
                          "; ranklab will not follow it (name the store file itself)");
}

// New and empty, 0600, never through a link; SQLite then makes its -wal and -shm 0600 too.
void createEmptyStore(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);  // otherwise SQLite's own open says why (a read-only folder)
}

// SQLite writes through whatever is at the -wal, -shm and -journal names: each is absent or
// a regular file of the store's owner.
void checkSidecars(const std::string& db_path, uid_t owner) {
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const std::string path = db_path + suffix;
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) continue;
    if (S_ISLNK(info.st_mode))
      throw refusal(path, "is a symbolic link; ranklab will not let SQLite write through it");
    if (!S_ISREG(info.st_mode)) throw refusal(path, "is not a regular file");
    if (info.st_uid != owner)
      throw refusal(path, "owned by " + accountText(info.st_uid) + ", not by the store's owner (" +
                              accountText(owner) + ")");
  }
}

}  // namespace

void requireOwnStore(const std::string& db_path, bool allow_foreign) {
  refuseForeignLink(db_path);
  struct stat info {};
  if (allow_foreign || ::stat(db_path.c_str(), &info) != 0 || info.st_uid == geteuid()) return;
  throw refusal(db_path,
                ownedByAnotherText(info.st_uid) + "; pass --allow-foreign-store to open it anyway");
}

void prepareStoreFiles(const std::string& db_path) {
  refuseForeignLink(db_path);
  struct stat info {};
  if (::lstat(db_path.c_str(), &info) != 0) createEmptyStore(db_path);
  refuseForeignLink(db_path);                       // planted between the look and the create
  if (::stat(db_path.c_str(), &info) != 0) return;  // SQLite says why it cannot open it
  checkSidecars(resolved(db_path), info.st_uid);
}

}  // namespace ranklab
