// Files and folders ranklab makes beside a store, a checkpoint or an export, where another
// local account may be able to write (a shared /tmp sub-folder, a project folder): a file is
// created new, never through a symbolic link, readable by this account only (0600); a folder
// is made (0700) or reused only when it is this account's own real folder that no other
// account can write into. Anything else is refused, naming the path and why (issue 57).
#pragma once

#include <sys/types.h>

#include <stdexcept>
#include <string>

namespace ranklab {

class PrivateFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "nobody"; "uid 4242" for a uid without a name.
std::string accountName(uid_t uid);
// "uid 65534 (nobody)"; "uid 4242" for a uid without a name.
std::string accountText(uid_t uid);
// "owned by uid 65534 (nobody), not by this account (root)".
std::string ownedByAnotherText(uid_t owner);

// Creates `path` exclusively (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600) and writes `bytes`
// whole, fsynced when `durable`; on a failure removes what it made. Throws naming the path
// and the cause: "PATH: cannot write: it is a symbolic link; ranklab will not write through
// it", "... it exists already", or the system's words.
void writeNewPrivateFile(const std::string& path, const std::string& bytes, bool durable = false);

// A descriptor for appending to a log at `path`: created 0600, or reopened when it is this
// account's own regular file; never through a link. The caller closes it. Throws as
// writeNewPrivateFile.
int openPrivateLog(const std::string& path);

// Makes `dir` (mode 0700, its missing parents as usual) or reuses it, tightened to 0700 when
// it is this account's own; throws naming it when it is a link, not a folder, another
// account's, or writable by its group or others: "PATH: cannot use it as WHAT: " and "is a
// symbolic link; ranklab will not write through it", "owned by uid 65534 (nobody), not by
// this account (root)" or "writable by others (mode 0777)". `what`: "the Slurm output folder".
void ensurePrivateFolder(const std::string& dir, const std::string& what);

// Why the existing folder `dir`, named by the user (a checkpoint's folder), lets another
// account replace what ranklab writes there, or "": owned by another account than this one
// or root, or writable by its group or others without the sticky bit (as /tmp has). Links
// to a folder are followed: the user named them.
std::string sharedFolderReason(const std::string& dir);

// "" when `path` (lstat: not followed) is absent or this account's own regular file; else
// why not ("is a symbolic link", "owned by uid 65534 (nobody), ...", "is not a regular file").
std::string notOwnFileReason(const std::string& path);

}  // namespace ranklab
