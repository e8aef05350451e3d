// The store's files where another account may write beside them (a store in a shared
// folder): a new store is created 0600 before SQLite opens it, so its -wal and -shm (which
// SQLite makes with the store file's mode) are 0600 too; a link another account planted at
// the store's name or at its -wal, -shm or -journal is refused, never followed; a store
// owned by another account is opened only when the user says so (--allow-foreign-store).
#pragma once

#include <string>

namespace ranklab {

// Throws a StoreError naming `db_path` when it exists and another account owns it (through a
// link this account owns, the file it points to), unless `allow_foreign`:
// "PATH: owned by uid 65534 (nobody), not by this account (root); pass --allow-foreign-store
// to open it anyway".
void requireOwnStore(const std::string& db_path, bool allow_foreign);

// Before SQLite opens `db_path`: refuses (a StoreError naming the file and why) a link at its
// name that another account owns, and a -wal, -shm or -journal that is a link or not owned
// by the store's owner; creates a store that does not exist yet, empty and 0600, never
// through a link.
void prepareStoreFiles(const std::string& db_path);

}  // namespace ranklab
