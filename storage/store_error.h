// The run store's one exception type, apart from RunStore so the SQLite helpers below it
// can throw it without including the store.
#pragma once

#include <stdexcept>

namespace ranklab {

// Any failure of the store: message names the file, the operation and SQLite's cause.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file written by a newer ranklab (a larger schema version): never migrated or written.
class NewerSchemaError : public StoreError {
 public:
  using StoreError::StoreError;
};

}  // namespace ranklab
