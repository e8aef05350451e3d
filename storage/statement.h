// RAII wrappers over the SQLite C API used by the run store: a prepared statement, a
// scoped use of it (bind, step, read), a transaction guard. Every failure is a StoreError
// naming the file, the operation and SQLite's message. Internal to storage/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/store_error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ranklab::sqlite {

// "<file>: <op>: <cause>"
StoreError error(const std::string& file, std::string_view op, std::string_view cause);
// Same, with SQLite's current message for db as the cause.
StoreError error(sqlite3* db, const std::string& file, std::string_view op);

// Whether db's last failure was a full disk (SQLITE_FULL, or an I/O error from ENOSPC/EDQUOT).
bool diskIsFull(sqlite3* db);
// `path` for a "file:" URI: '%', '?' and '#' escaped so they stay part of the name.
std::string uriPath(const std::string& path);

// Runs fixed SQL (one or more statements, no parameters) to completion.
void execScript(sqlite3* db, const std::string& file, std::string_view op, const char* sql);

// A statement prepared once and reused; use it through a Query.
class Statement {
 public:
  Statement(sqlite3* db, std::string file, std::string op, const char* sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

 private:
  friend class Query;
  sqlite3* db_;
  std::string file_;
  std::string op_;  // what the statement does, for messages ("insert step")
  sqlite3_stmt* stmt_ = nullptr;
};

// One execution of a Statement. Parameters are bound in order; columns are read in
// order (the counter restarts at each row). The destructor resets the statement so it
// can be reused and no read snapshot stays open.
class Query {
 public:
  explicit Query(Statement& statement) : s_(statement) {}
  ~Query();
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

  // Binds every parameter at once; the count must match the statement's.
  template <typename... Args>
  Query& bind(const Args&... args) {
    expectParameters(static_cast<int>(sizeof...(args)));
    int index = 0;
    (bindAt(++index, args), ...);
    return *this;
  }

  // Binds `count` parameters in order: `each` is called with a binder, which it calls once
  // per value (for rows whose columns are visited rather than named one by one).
  template <typename Each>
  Query& bindEach(int count, Each each) {
    expectParameters(count);
    int index = 0;
    each([&](const auto& value) { bindAt(++index, value); });
    if (index != count) expectParameters(index);  // throws naming both counts
    return *this;
  }

  bool next();          // steps; true while a row is available
  void run();           // steps to completion, ignoring any rows
  int changes() const;  // rows changed by the last run()

  int64_t int64();
  int integer() { return static_cast<int>(int64()); }
  double real();
  bool boolean() { return int64() != 0; }
  std::string text();       // NULL reads as ""
  bool nextIsNull() const;  // the column the next read would return

 private:
  void expectParameters(int count);
  void bindAt(int index, int64_t value);
  void bindAt(int index, int value) { bindAt(index, static_cast<int64_t>(value)); }
  void bindAt(int index, bool value) { bindAt(index, static_cast<int64_t>(value ? 1 : 0)); }
  void bindAt(int index, double value);
  void bindAt(int index, const std::string& value);
  void bindAt(int index, const char* value) { bindAt(index, std::string(value)); }
  void check(int rc, std::string_view what);

  Statement& s_;
  int column_ = 0;
};

// BEGIN IMMEDIATE in the constructor (takes the write lock up front, so busy_timeout
// applies instead of a deadlock on upgrade); ROLLBACK in the destructor unless commit()
// was called. The destructor never throws.
class Transaction {
 public:
  Transaction(sqlite3* db, std::string file, std::string op);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void commit();

 private:
  sqlite3* db_;
  std::string file_;
  std::string op_;
  bool done_ = false;
};

}  // namespace ranklab::sqlite
