// How each row of the run store is read from a query and bound into a statement, column by
// column, and the steps table's SQL built from the record's lists: one place for RunStore
// and its parts.
#pragma once

#include <string>
#include <vector>

#include "storage/records.h"
#include "storage/statement.h"

namespace ranklab::store_rows {

using sqlite::Query;
using sqlite::Statement;

// The steps table's columns in StepRow's order (storage/step_record.h), then loss_nan.
const std::string& stepColumns();
std::string replaceStepSql();
// SELECT every step column FROM steps WHERE `where`.
std::string selectStepsSql(const char* where);

// A column's value from the query's next column.
inline void readColumn(Query& q, int64_t& v) {
  v = q.int64();
}
inline void readColumn(Query& q, int& v) {
  v = q.integer();
}
inline void readColumn(Query& q, double& v) {
  v = q.real();
}
inline void readColumn(Query& q, bool& v) {
  v = q.boolean();
}
inline void readColumn(Query& q, std::string& v) {
  v = q.text();
}

// Row's columns (storage/record_fields.h), comma separated, in visitColumns() order.
template <typename Row>
std::string columnsOf() {
  Row row;
  std::string columns;
  visitColumns(row, [&](const char* name, const auto&) {
    if (!columns.empty()) columns += ", ";
    columns += name;
  });
  return columns;
}

// "?, ?, ...": a parameter per comma-separated column.
std::string placeholdersFor(const std::string& columns);
// "<verb> INTO <table> (<columns>) VALUES (?, ...)", a parameter per comma-separated column.
std::string insertColumnsSql(const std::string& verb, const std::string& table,
                             const std::string& columns);

// insertColumnsSql() of Row's columns[, extra]; writeRow() binds it.
template <typename Row>
std::string insertSql(const std::string& verb, const std::string& table,
                      const std::string& extra = {}) {
  return insertColumnsSql(verb, table, columnsOf<Row>() + (extra.empty() ? "" : ", " + extra));
}

// "SELECT Row's columns[, extra] FROM <table> <rest>"; readRow() reads it.
template <typename Row>
std::string selectSql(const std::string& table, const std::string& rest,
                      const std::string& extra = {}) {
  return "SELECT " + columnsOf<Row>() + (extra.empty() ? "" : ", " + extra) + " FROM " + table +
         " " + rest;
}

// One row of selectSql<Row>(), its columns in order (the extra ones are left to the caller).
template <typename Row>
Row readRow(Query& q) {
  Row row;
  visitColumns(row, [&](const char*, auto& value) { readColumn(q, value); });
  return row;
}

// Runs insertSql<Row>() (its extra columns bound from `extra`) for `row`.
template <typename Row, typename... Extra>
void writeRow(Statement& statement, const Row& row, const Extra&... extra) {
  int count = static_cast<int>(sizeof...(extra));
  visitColumns(row, [&](const char*, const auto&) { ++count; });
  Query q(statement);
  q.bindEach(count, [&](auto bind) {
     visitColumns(row, [&](const char*, const auto& value) { bind(value); });
     (bind(extra), ...);
   }).run();
}

RankRow readRank(Query& q);
StepRow readStep(Query& q);  // one row of selectStepsSql(), in stepColumns() order
ServerLoadRow readServerLoad(Query& q);
EvalRow readEval(Query& q);
EventRow readEvent(Query& q);
SpanRow readSpan(Query& q);

void writeRank(Statement& statement, const RankRow& r);
void writeStep(Statement& statement, const StepRow& s);
void writeServerLoad(Statement& statement, const ServerLoadRow& r);
void writeEval(Statement& statement, const EvalRow& e);
void writeEvent(Statement& statement, const EventRow& e);
void writeSpan(Statement& statement, const SpanRow& s);

template <typename... Args>
std::vector<StepRow> readSteps(Statement& statement, const Args&... args) {
  std::vector<StepRow> rows;
  Query q(statement);
  q.bind(args...);
  while (q.next()) rows.push_back(readStep(q));
  return rows;
}

// Runs `statement` for one run id and reads every row with `read`.
template <typename Row>
std::vector<Row> readAll(Statement& statement, int64_t run_id, Row (*read)(Query&)) {
  std::vector<Row> rows;
  Query q(statement);
  q.bind(run_id);
  while (q.next()) rows.push_back(read(q));
  return rows;
}

}  // namespace ranklab::store_rows
