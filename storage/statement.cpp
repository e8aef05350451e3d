#include "storage/statement.h"

#include <sqlite3.h>

#include <cerrno>
#include <utility>

namespace ranklab::sqlite {

StoreError error(const std::string& file, std::string_view op, std::string_view cause) {
  std::string message = file;
  message.append(": ").append(op).append(": ").append(cause);
  return StoreError(message);
}

StoreError error(sqlite3* db, const std::string& file, std::string_view op) {
  return error(file, op, db ? sqlite3_errmsg(db) : "out of memory");
}

bool diskIsFull(sqlite3* db) {
  if (!db) return false;
  if ((sqlite3_extended_errcode(db) & 0xff) == SQLITE_FULL) return true;
  const int cause = sqlite3_system_errno(db);
  return cause == ENOSPC || cause == EDQUOT;
}

std::string uriPath(const std::string& path) {
  std::string escaped;
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      static const char kHex[] = "0123456789ABCDEF";
      escaped += '%';
      escaped += kHex[static_cast<unsigned char>(c) >> 4];
      escaped += kHex[c & 0xf];
    } else {
      escaped += c;
    }
  }
  return escaped;
}

void execScript(sqlite3* db, const std::string& file, std::string_view op, const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK) return;
  std::string cause = message ? message : sqlite3_errmsg(db);
  sqlite3_free(message);
  throw error(file, op, cause);
}

// --- Statement ---------------------------------------------------------------------------

Statement::Statement(sqlite3* db, std::string file, std::string op, const char* sql)
    : db_(db), file_(std::move(file)), op_(std::move(op)) {
  if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK)
    throw error(db_, file_, "prepare " + op_);
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

// --- Query -------------------------------------------------------------------------------

Query::~Query() {
  // reset() repeats the last step's error, which was already reported; nothing to do here.
  sqlite3_reset(s_.stmt_);
  sqlite3_clear_bindings(s_.stmt_);
}

void Query::check(int rc, std::string_view what) {
  if (rc != SQLITE_OK) throw error(s_.db_, s_.file_, std::string(what) + " " + s_.op_);
}

void Query::expectParameters(int count) {
  const int expected = sqlite3_bind_parameter_count(s_.stmt_);
  if (count != expected)
    throw error(s_.file_, "bind " + s_.op_,
                std::to_string(count) + " values for " + std::to_string(expected) + " parameters");
}

void Query::bindAt(int index, int64_t value) {
  check(sqlite3_bind_int64(s_.stmt_, index, value), "bind");
}

void Query::bindAt(int index, double value) {
  check(sqlite3_bind_double(s_.stmt_, index, value), "bind");
}

void Query::bindAt(int index, const std::string& value) {
  check(sqlite3_bind_text64(s_.stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                            SQLITE_UTF8),
        "bind");
}

bool Query::next() {
  column_ = 0;
  const int rc = sqlite3_step(s_.stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw error(s_.db_, s_.file_, s_.op_);
}

void Query::run() {
  while (next()) {
  }
}

int Query::changes() const {
  return sqlite3_changes(s_.db_);
}

int64_t Query::int64() {
  return sqlite3_column_int64(s_.stmt_, column_++);
}

double Query::real() {
  return sqlite3_column_double(s_.stmt_, column_++);
}

std::string Query::text() {
  const int column = column_++;
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(s_.stmt_, column));
  if (!data) return {};
  return std::string(data, static_cast<size_t>(sqlite3_column_bytes(s_.stmt_, column)));
}

bool Query::nextIsNull() const {
  return sqlite3_column_type(s_.stmt_, column_) == SQLITE_NULL;
}

// --- Transaction -------------------------------------------------------------------------

Transaction::Transaction(sqlite3* db, std::string file, std::string op)
    : db_(db), file_(std::move(file)), op_(std::move(op)) {
  execScript(db_, file_, "begin " + op_, "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  // SQLite may already have rolled back on its own (e.g. disk full); then there is nothing to
  // undo, and ROLLBACK would only report "no transaction is active".
  if (!done_ && !sqlite3_get_autocommit(db_))
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  execScript(db_, file_, "commit " + op_, "COMMIT");
  done_ = true;
}

}  // namespace ranklab::sqlite
