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

RunRow readRun(Query& q);
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
