// The run store's schema and its forward migrations (documented in docs/schema.md).
#pragma once

#include <string>

struct sqlite3;

namespace ranklab::schema {

// Sets the connection's pragmas, refuses a file that is not SQLite or was written by a
// newer ranklab (NewerSchemaError, before anything is set), then migrates forward to
// `target` in one transaction.
void prepare(sqlite3* db, const std::string& file, int target);

// PRAGMA user_version of the open file.
int version(sqlite3* db, const std::string& file);

}  // namespace ranklab::schema
