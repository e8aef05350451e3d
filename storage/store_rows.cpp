// How each row of the run store is read from and written to its table, column by column.
#include "storage/store_rows.h"

#include <cmath>
#include <limits>

namespace ranklab::store_rows {

// The steps table's columns in StepRow's order, from the record's lists
// (storage/step_record.h), then loss_nan (SQLite cannot hold a NaN); readStep and writeStep
// walk the same lists.
const std::string& stepColumns() {
  static const std::string columns = joinedStepColumns(", ") + ", loss_nan";
  return columns;
}

std::string placeholdersFor(const std::string& columns) {
  std::string marks = "?";
  for (char ch : columns)
    if (ch == ',') marks += ", ?";
  return marks;
}

std::string insertColumnsSql(const std::string& verb, const std::string& table,
                             const std::string& columns) {
  return verb + " INTO " + table + " (" + columns + ") VALUES (" + placeholdersFor(columns) + ")";
}

std::string replaceStepSql() {
  return insertColumnsSql("INSERT OR REPLACE", "steps", stepColumns());
}

// SELECT every step column FROM steps WHERE `where`.
std::string selectStepsSql(const char* where) {
  return "SELECT " + stepColumns() + " FROM steps WHERE " + where;
}

RankRow readRank(Query& q) {
  return readRow<RankRow>(q);
}

// One row of selectStepsSql(), columns in stepColumns() order.
StepRow readStep(Query& q) {
  StepRow s;
  readColumn(q, s.run_id);
  readColumn(q, s.rank);
  readColumn(q, s.step);
  readColumn(q, s.epoch);
  readColumn(q, s.samples);
#define RANKLAB_READ_PHASE(name, kind) readColumn(q, s.name##_ns);
  RANKLAB_STEP_PHASES(RANKLAB_READ_PHASE)
#undef RANKLAB_READ_PHASE
  readColumn(q, s.comm_hidden_ns);
#define RANKLAB_READ_MEASURE(type, name, init) readColumn(q, s.name);
  RANKLAB_STEP_MEASURES(RANKLAB_READ_MEASURE)
#undef RANKLAB_READ_MEASURE
  readColumn(q, s.time_ns);
  if (q.boolean()) s.loss = std::numeric_limits<double>::quiet_NaN();  // loss_nan
  return s;
}

ServerLoadRow readServerLoad(Query& q) {
  return readRow<ServerLoadRow>(q);
}

EvalRow readEval(Query& q) {
  EvalRow e = readRow<EvalRow>(q);
  if (q.boolean()) e.test_loss = std::numeric_limits<double>::quiet_NaN();  // loss_nan
  return e;
}

EventRow readEvent(Query& q) {
  return readRow<EventRow>(q);
}

void writeRank(Statement& statement, const RankRow& r) {
  writeRow(statement, r);
}

void writeStep(Statement& statement, const StepRow& s) {
  Query q(statement);
#define RANKLAB_PHASE_VALUE(name, kind) , s.name##_ns
#define RANKLAB_MEASURE_VALUE(type, name, init) , s.name
  q.bind(s.run_id, s.rank, s.step, s.epoch, s.samples RANKLAB_STEP_PHASES(RANKLAB_PHASE_VALUE),
         s.comm_hidden_ns RANKLAB_STEP_MEASURES(RANKLAB_MEASURE_VALUE), s.time_ns,
         std::isnan(s.loss))
      .run();
#undef RANKLAB_PHASE_VALUE
#undef RANKLAB_MEASURE_VALUE
}

void writeServerLoad(Statement& statement, const ServerLoadRow& r) {
  writeRow(statement, r);
}

void writeEval(Statement& statement, const EvalRow& e) {
  // SQLite cannot hold a NaN: it would arrive as NULL, and the column's default 0 with it.
  EvalRow stored = e;
  const bool nan = std::isnan(e.test_loss);
  if (nan) stored.test_loss = 0;
  writeRow(statement, stored, nan);
}

void writeEvent(Statement& statement, const EventRow& e) {
  writeRow(statement, e);
}

void writeSpan(Statement& statement, const SpanRow& s) {
  writeRow(statement, s);
}

SpanRow readSpan(Query& q) {
  return readRow<SpanRow>(q);
}

}  // namespace ranklab::store_rows
