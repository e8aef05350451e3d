// How each row of the run store is read from and written to its table, column by column.
#include "storage/store_rows.h"

#include <cmath>
#include <limits>

namespace ranklab::store_rows {

namespace {

void readColumn(Query& q, int64_t& v) {
  v = q.int64();
}
void readColumn(Query& q, int& v) {
  v = q.integer();
}
void readColumn(Query& q, double& v) {
  v = q.real();
}
void readColumn(Query& q, bool& v) {
  v = q.boolean();
}

}  // namespace

// The steps table's columns in StepRow's order, from the record's lists
// (storage/step_record.h), then loss_nan (SQLite cannot hold a NaN); readStep and writeStep
// walk the same lists.
const std::string& stepColumns() {
  static const std::string columns = joinedStepColumns(", ") + ", loss_nan";
  return columns;
}

std::string replaceStepSql() {
  std::string marks = "?";
  for (char ch : stepColumns())
    if (ch == ',') marks += ", ?";
  return "INSERT OR REPLACE INTO steps (" + stepColumns() + ") VALUES (" + marks + ")";
}

// SELECT every step column FROM steps WHERE `where`.
std::string selectStepsSql(const char* where) {
  return "SELECT " + stepColumns() + " FROM steps WHERE " + where;
}

RunRow readRun(Query& q) {
  RunRow r;
  r.id = q.int64();
  r.name = q.text();
  r.created = q.text();
  r.finished = q.text();
  r.status = q.text();
  r.job_path = q.text();
  r.job_toml = q.text();
  r.world = q.integer();
  r.strategy = q.text();
  r.algorithm = q.text();
  r.codec = q.text();
  r.amp = q.text();
  r.epochs = q.integer();
  r.wall_s = q.real();
  r.train_s = q.real();
  return r;
}

RankRow readRank(Query& q) {
  RankRow r;
  r.run_id = q.int64();
  r.rank = q.integer();
  r.host = q.text();
  r.pid = q.int64();
  r.status = q.text();
  r.exit_status = q.integer();
  r.train_ns = q.int64();
  r.seq_gaps = q.int64();
  r.last_seq = q.int64();
  return r;
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
  ServerLoadRow r;
  r.run_id = q.int64();
  r.rank = q.integer();
  r.shard = q.integer();
  r.key_begin = q.int64();
  r.key_end = q.int64();
  r.interval_ns = q.int64();
  r.pushes = q.int64();
  r.pulls = q.int64();
  r.bytes_rx = q.int64();
  r.bytes_tx = q.int64();
  r.busy_ns = q.int64();
  r.idle_ns = q.int64();
  r.held_ns = q.int64();
  r.max_staleness = q.int64();
  r.version = q.int64();
  r.time_ns = q.int64();
  r.bytes_raw = q.int64();
  return r;
}

EvalRow readEval(Query& q) {
  EvalRow e;
  e.run_id = q.int64();
  e.rank = q.integer();
  e.step = q.int64();
  e.epoch = q.integer();
  e.test_loss = q.real();
  e.test_accuracy = q.real();
  e.time_ns = q.int64();
  if (q.boolean()) e.test_loss = std::numeric_limits<double>::quiet_NaN();  // loss_nan
  return e;
}

EventRow readEvent(Query& q) {
  EventRow e;
  e.run_id = q.int64();
  e.rank = q.integer();
  e.step = q.int64();
  e.kind = q.text();
  e.text = q.text();
  e.time_ns = q.int64();
  return e;
}

void writeRank(Statement& statement, const RankRow& r) {
  Query q(statement);
  q.bind(r.run_id, r.rank, r.host, r.pid, r.status, r.exit_status, r.train_ns, r.seq_gaps,
         r.last_seq)
      .run();
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
  Query q(statement);
  q.bind(r.run_id, r.rank, r.shard, r.key_begin, r.key_end, r.interval_ns, r.pushes, r.pulls,
         r.bytes_rx, r.bytes_tx, r.busy_ns, r.idle_ns, r.held_ns, r.max_staleness, r.version,
         r.time_ns, r.bytes_raw)
      .run();
}

void writeEval(Statement& statement, const EvalRow& e) {
  Query q(statement);
  // SQLite cannot hold a NaN: it would arrive as NULL, and the column's default 0 with it.
  const bool nan = std::isnan(e.test_loss);
  q.bind(e.run_id, e.rank, e.step, e.epoch, nan ? 0.0 : e.test_loss, e.test_accuracy, e.time_ns,
         nan)
      .run();
}

void writeEvent(Statement& statement, const EventRow& e) {
  Query q(statement);
  q.bind(e.run_id, e.rank, e.step, e.kind, e.text, e.time_ns).run();
}

void writeSpan(Statement& statement, const SpanRow& s) {
  Query q(statement);
  q.bind(s.run_id, s.rank, s.step, s.kind, s.start_ns, s.end_ns, s.part, s.peer, s.chunk, s.bytes)
      .run();
}

SpanRow readSpan(Query& q) {
  SpanRow s;
  s.run_id = q.int64();
  s.rank = q.integer();
  s.step = q.int64();
  s.kind = q.text();
  s.start_ns = q.int64();
  s.end_ns = q.int64();
  s.part = q.integer();
  s.peer = q.integer();
  s.chunk = q.integer();
  s.bytes = q.int64();
  return s;
}

}  // namespace ranklab::store_rows
